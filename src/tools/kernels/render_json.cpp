// SPDX-License-Identifier: BSD-3-Clause
#include "render.hpp"

#include "common/json_writer.hpp"

#include <sstream>

namespace optireduce::kernel_bench {
namespace {

using tools::JsonWriter;

// Figures keep the precision they always had, so a diff of two runs' JSON shows measurements only.
constexpr const char *kGbps = "%.3f", *kRatio = "%.4f";

std::uint64_t vector_bytes(std::size_t floats) { return floats * sizeof(float); }

void run_fields(JsonWriter &j, const Settings &s, const Results &r) {
    j.field("tool", "optireduce-kernel-bench");
    j.field("quick", s.quick);
    j.field("cpu", r.cpu);
    j.field("cpu_share", r.cpu_share, "%.3f");
    j.field("warmup", s.warmup);
    j.field("reps", s.reps);
    j.field("l2_bytes", static_cast<std::uint64_t>(l2_bytes()));
    j.begin_object("isa_supported");
    for (const Isa isa : kAllIsas) j.field(to_string(isa), isa_supported(isa));
    j.end_object();
}

void copy_object(JsonWriter &j, const char *key, const CopyRow &c) {
    j.begin_object(key);
    j.field("bytes", static_cast<std::uint64_t>(c.bytes));
    j.field("best_gbps", c.gbps.best, kGbps);
    j.field("median_gbps", c.gbps.median, kGbps);
    j.end_object();
}

void fwht_and_sign(JsonWriter &j, const Settings &s, const Results &r) {
    j.begin_object("fwht");
    j.field("vector_bytes", vector_bytes(s.vec_floats));
    j.begin_array("rows");
    for (const FwhtRow &f : r.fwht) {
        j.begin_object();
        j.field("isa", to_string(f.isa));
        j.field("block", static_cast<std::uint64_t>(f.block));
        j.field("gbps", f.gbps, kGbps);
        j.field("ratio_copy", f.gbps / r.copy(), kRatio);
        j.field("l2_gbps", f.hot_gbps, kGbps);
        j.end_object();
    }
    j.end_array();
    j.end_object();
    j.begin_object("sign_flip");
    j.field("vector_bytes", vector_bytes(s.vec_floats));
    j.begin_array("rows");
    for (const SignRow &g : r.sign) {
        j.begin_object();
        j.field("isa", to_string(g.isa));
        j.field("gbps", g.gbps, kGbps);
        j.field("ratio_copy", g.gbps / r.copy(), kRatio);
        j.field("l2_gbps", g.hot_gbps, kGbps);
        j.end_object();
    }
    j.end_array();
    j.end_object();
}

void scaled_sum(JsonWriter &j, const Settings &s, const Results &r) {
    j.begin_object("scaled_sum");
    j.field("vector_bytes", vector_bytes(s.vec_floats));
    j.field("traffic_vectors", kTrafficVectors, "%g");
    j.begin_array("rows");
    for (const SumRow &u : r.sum) {
        j.begin_object();
        j.field("kernel", u.kernel);
        j.field("isa", u.isa);
        j.field("out_gbps", u.out_gbps, kGbps);
        j.field("traffic_gbps", u.traffic_gbps, kGbps);
        j.field("ratio_copy_traffic", u.traffic_gbps / (2 * r.copy()), kRatio);
        j.field("l2_out_gbps", u.hot_out_gbps, kGbps);
        j.end_object();
    }
    j.end_array();
    j.end_object();
}

void encode_decode(JsonWriter &j, const Settings &s, const Results &r) {
    j.begin_object("encode_decode");
    j.field("vector_bytes", vector_bytes(s.codec_floats));
    j.field("parts", kRanks);
    j.begin_array("rows");
    for (const CodecRow &c : r.codec) {
        j.begin_object();
        j.field("isa", to_string(c.isa));
        j.field("max_block", static_cast<std::uint64_t>(c.max_block));
        j.field("block", static_cast<std::uint64_t>(c.block));
        j.field("interleave", c.interleave);
        j.field("encode_gbps", c.enc_gbps, kGbps);
        j.field("decode_gbps", c.dec_gbps, kGbps);
        j.field("gbps", c.gbps, kGbps);
        j.field("ratio_copy", c.gbps / r.copy(), kRatio);
        j.end_object();
    }
    j.end_array();
    j.end_object();
}

void wire_codec(JsonWriter &j, const Settings &s, const Results &r) {
    j.begin_object("wire_codec");
    j.field("vector_bytes", vector_bytes(s.vec_floats));
    j.begin_array("rows");
    for (const WireRow &w : r.wire) {
        j.begin_object();
        j.field("codec", to_string(w.codec));
        j.field("isa", to_string(w.isa));
        j.field("payload_bytes", static_cast<std::uint64_t>(w.payload));
        j.field("chunk", static_cast<std::uint64_t>(w.chunk));
        j.field("encode_gbps", w.enc_gbps, kGbps);
        j.field("decode_gbps", w.dec_gbps, kGbps);
        j.field("encode_ratio_copy", w.enc_gbps / r.copy(), kRatio);
        j.field("decode_ratio_copy", w.dec_gbps / r.copy(), kRatio);
        j.field("l2_encode_gbps", w.hot_enc_gbps, kGbps);
        j.field("l2_decode_gbps", w.hot_dec_gbps, kGbps);
        j.end_object();
    }
    j.end_array();
    j.end_object();
}

}  // namespace

std::string render_json(const Settings &s, const Results &r) {
    std::ostringstream os;
    JsonWriter j(os);
    j.begin_object();
    run_fields(j, s, r);
    copy_object(j, "copy_memory", r.copy_mem);
    copy_object(j, "copy_l2", r.copy_l2);
    fwht_and_sign(j, s, r);
    scaled_sum(j, s, r);
    encode_decode(j, s, r);
    wire_codec(j, s, r);
    j.field("checks", "passed");
    j.end_object();
    return os.str();
}

}  // namespace optireduce::kernel_bench
