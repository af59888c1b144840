"""sklearn's digits for test/python/ddp_train.py: the same split as scripts/train/train.py.

Only numpy and sklearn: test/python/drive.py writes the split once (save) so that the ranks
load an .npz instead of each importing sklearn.
"""
import numpy as np

SPLIT_SEED = 20240601  # scripts/train/train.py's


def split():
    """1797 8x8 images, a fixed 80/20 split, standardized with the training set's statistics:
    float32 x_tr, int64 y_tr, float32 x_te, int64 y_te."""
    from sklearn.datasets import load_digits
    x, y = load_digits(return_X_y=True)
    order = np.random.RandomState(SPLIT_SEED).permutation(len(x))
    n_train = int(0.8 * len(x))
    tr, te = order[:n_train], order[n_train:]
    mean, std = x[tr].mean(axis=0), x[tr].std(axis=0)
    std[std == 0] = 1.0  # the always-blank corner pixels
    x = ((x - mean) / std).astype(np.float32)
    y = y.astype(np.int64)
    return x[tr].copy(), y[tr].copy(), x[te].copy(), y[te].copy()


def save(path):
    x_tr, y_tr, x_te, y_te = split()
    np.savez(path, x_tr=x_tr, y_tr=y_tr, x_te=x_te, y_te=y_te)
