# SPDX-License-Identifier: BSD-3-Clause
"""sklearn's digits and the MLP trained on them: the split, the model and the batch order, for
scripts/train/train.py and test/python/ddp_train.py alike. The test compares a native run with
the library's bit for bit and the benchmark reports time to accuracy on the same task, so both
must build exactly these.

numpy at import; sklearn and torch only inside the functions that use them, so that
test/python/drive.py can write the split once (save) without torch and the ranks load an .npz
instead of each importing sklearn.
"""
import numpy as np

SPLIT_SEED = 20240601  # the train/test split is the same for every training --seed


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


def load_tensors(path=None):
    """The split as torch tensors: from an .npz that save() wrote, or computed here."""
    import torch
    if path:
        z = np.load(path)
        arrays = (z["x_tr"], z["y_tr"], z["x_te"], z["y_te"])
    else:
        arrays = split()
    return tuple(torch.from_numpy(a) for a in arrays)


def make_model(hidden, seed):
    """An MLP 64 -> hidden... -> 10 with ReLUs; the same seed on every rank gives identical
    replicas at the start."""
    import torch
    torch.manual_seed(seed)
    layers, width = [], 64
    for w in hidden:
        layers += [torch.nn.Linear(width, w), torch.nn.ReLU()]
        width = w
    layers.append(torch.nn.Linear(width, 10))
    return torch.nn.Sequential(*layers)


def batches(n_train, global_batch, rank, world, seed):
    """Endless local batches (index tensors): a seeded permutation per epoch, cut into global
    batches (the last partial one dropped); rank r takes the r-th slice of each."""
    import torch
    local = global_batch // world
    epoch = 0
    while True:
        perm = torch.from_numpy(np.random.RandomState(seed * 100003 + epoch).permutation(n_train))
        for start in range(0, n_train - global_batch + 1, global_batch):
            yield perm[start + rank * local:start + (rank + 1) * local]
        epoch += 1
