#include "core/alloc_config.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "core/error.h"

namespace cl {

namespace {

bool is_pow2(size_t v) { return v != 0 && (v & (v - 1)) == 0; }
int log2_floor(size_t v) { return 63 - __builtin_clzll(v); }

// Splits "a:1,b:[2:3,>:4]" into words and the single-character separators ",:[]", dropping
// spaces, as torch's tokenizer does.
std::vector<std::string> tokenize(const std::string& s) {
  std::vector<std::string> out;
  std::string word;
  for (char c : s) {
    if (c == ',' || c == ':' || c == '[' || c == ']') {
      if (!word.empty()) out.push_back(std::move(word));
      word.clear();
      out.emplace_back(1, c);
    } else if (c != ' ') {
      word.push_back(c);
    }
  }
  if (!word.empty()) out.push_back(word);
  return out;
}

class Parser {
 public:
  explicit Parser(const std::string& s) : toks_(tokenize(s)) {}

  AllocatorSettings parse(AllocatorSettings st) {
    while (i_ < toks_.size()) {
      const std::string key = toks_[i_++];
      expect(":", key);
      if (key == "max_split_size_mb") {
        size_t mb = integer(key);
        CL_CHECK_AS(ValueError, mb >= kLargeBuffer / kMiB,
                    "CachingAllocator option max_split_size_mb too small, must be >= ",
                    kLargeBuffer / kMiB);
        st.max_split_size = mb > SIZE_MAX / kMiB ? SIZE_MAX : mb * kMiB;
      } else if (key == "max_non_split_rounding_mb") {
        size_t mb = integer(key);
        CL_CHECK_AS(ValueError, mb >= kLargeBuffer / kMiB,
                    "CachingAllocator option max_non_split_rounding_mb too small, must be >= ",
                    kLargeBuffer / kMiB);
        st.max_non_split_rounding_size = mb > SIZE_MAX / kMiB ? SIZE_MAX : mb * kMiB;
      } else if (key == "large_segment_size_mb") {
        size_t mb = integer(key);
        CL_CHECK_AS(ValueError, mb >= 2 && mb <= 1024,
                    "CUDALITE_ALLOC_CONF: large_segment_size_mb must be in [2, 1024], got ", mb);
        st.large_segment_size = mb * kMiB;
      } else if (key == "garbage_collection_threshold") {
        double v = real(key);
        CL_CHECK_AS(ValueError, v > 0.0 && v < 1.0,
                    "garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
        st.garbage_collection_threshold = v;
      } else if (key == "roundup_power2_divisions") {
        roundup(st);
      } else if (key == "expandable_segments") {
        st.expandable_segments = boolean(key);
      } else if (key == "page_lending") {
        st.page_lending = boolean(key);
      } else if (key == "release_lock_on_cudamalloc") {
        st.release_lock_on_cudamalloc = boolean(key);
      } else if (key == "pinned_use_cuda_host_register") {
        st.pinned_use_cuda_host_register = boolean(key);
      } else if (key == "pinned_use_background_threads") {
        st.pinned_use_background_threads = boolean(key);
      } else if (key == "graph_capture_record_stream_reuse") {
        st.graph_capture_record_stream_reuse = boolean(key);
      } else if (key == "pinned_num_register_threads") {
        size_t n = integer(key);
        CL_CHECK_AS(ValueError, is_pow2(n), "Number of register threads has to be power of 2 ");
        CL_CHECK_AS(ValueError, n <= 128,
                    "Number of register threads should be less than or equal to 128");
        st.pinned_num_register_threads = n;
      } else if (key == "backend") {
        const std::string v = value(key);
        CL_CHECK_AS(ValueError, v == "native" || v == "cudaMallocAsync",
                    "Unknown allocator backend, options are native and cudaMallocAsync");
        CL_CHECK_AS(ValueError, v == "native",
                    "CUDALITE_ALLOC_CONF: backend:cudaMallocAsync is not supported by cudalite; "
                    "only backend:native is available");
      } else {
        throw ValueError(
            detail::str("Unrecognized key '", key,
                        "' in CUDALITE_ALLOC_CONF. Valid keys: backend, expandable_segments, "
                        "garbage_collection_threshold, graph_capture_record_stream_reuse, "
                        "large_segment_size_mb, max_non_split_rounding_mb, max_split_size_mb, "
                        "page_lending, pinned_num_register_threads, "
                        "pinned_use_background_threads, pinned_use_cuda_host_register, "
                        "release_lock_on_cudamalloc, roundup_power2_divisions"));
      }
      if (i_ < toks_.size()) expect(",", key);
    }
    return st;
  }

 private:
  void expect(const char* sep, const std::string& after) {
    CL_CHECK_AS(ValueError, i_ < toks_.size() && toks_[i_] == sep,
                "CUDALITE_ALLOC_CONF: expected '", sep, "' after '", after, "'",
                i_ < toks_.size() ? ", got '" + toks_[i_] + "'" : "");
    ++i_;
  }
  const std::string& value(const std::string& key) {
    CL_CHECK_AS(ValueError, i_ < toks_.size() && toks_[i_].size() > 0 && !is_sep(toks_[i_]),
                "CUDALITE_ALLOC_CONF: expected a value after '", key, ":'");
    return toks_[i_++];
  }
  static bool is_sep(const std::string& t) { return t == "," || t == ":" || t == "[" || t == "]"; }
  size_t integer(const std::string& key) {
    const std::string& v = value(key);
    bool digits = !v.empty() && v.size() < 20;
    for (char c : v) digits = digits && c >= '0' && c <= '9';
    CL_CHECK_AS(ValueError, digits, "CUDALITE_ALLOC_CONF: ", key,
                " expects a non-negative integer, got '", v, "'");
    return std::strtoull(v.c_str(), nullptr, 10);
  }
  double real(const std::string& key) {
    const std::string& v = value(key);
    char* end = nullptr;
    double d = std::strtod(v.c_str(), &end);
    CL_CHECK_AS(ValueError, end && *end == '\0', "CUDALITE_ALLOC_CONF: ", key,
                " expects a number, got '", v, "'");
    return d;
  }
  bool boolean(const std::string& key) {
    const std::string& v = value(key);
    CL_CHECK_AS(ValueError, v == "True" || v == "False", "Expected 'True' or 'False' for ", key,
                " in CUDALITE_ALLOC_CONF, got '", v, "'");
    return v == "True";
  }
  size_t divisions(const std::string& key) {
    size_t d = integer(key);
    CL_CHECK_AS(ValueError, d == 0 || is_pow2(d),
                "For roundups, the divisions has to be power of 2 or 0 to disable roundup ");
    return d;
  }
  // "roundup_power2_divisions:4" or "roundup_power2_divisions:[64:8,256:4,>:1]" where the
  // interval keys are MiB (powers of two) and ">" means every larger interval.
  void roundup(AllocatorSettings& st) {
    const std::string key = "roundup_power2_divisions";
    auto& div = st.roundup_power2_divisions;
    if (i_ < toks_.size() && toks_[i_] == "[") {
      ++i_;
      bool first = true;
      size_t last = 0;
      while (i_ < toks_.size() && toks_[i_] != "]") {
        const std::string interval = value(key);
        expect(":", interval);
        size_t d = divisions(key);
        if (interval == ">") {
          for (size_t k = first ? 0 : last + 1; k < div.size(); ++k) div[k] = d;
        } else {
          bool digits = !interval.empty() && interval.size() < 20;
          for (char c : interval) digits = digits && c >= '0' && c <= '9';
          size_t mb = digits ? std::strtoull(interval.c_str(), nullptr, 10) : 0;
          CL_CHECK_AS(ValueError, is_pow2(mb),
                      "For roundups, the intervals have to be power of 2 ");
          size_t k = std::min<size_t>(size_t(log2_floor(mb)), div.size() - 1);
          if (first) {
            for (size_t j = 0; j < k; ++j) div[j] = d;
            first = false;
          }
          div[k] = d;
          last = k;
        }
        if (i_ < toks_.size() && toks_[i_] != "]") expect(",", interval);
      }
      CL_CHECK_AS(ValueError, i_ < toks_.size(),
                  "CUDALITE_ALLOC_CONF: missing ']' in roundup_power2_divisions");
      ++i_;
    } else {
      size_t d = divisions(key);
      CL_CHECK_AS(ValueError, d != 0, "For roundups, the divisions has to be power of 2 ");
      div.fill(d);
    }
  }

  std::vector<std::string> toks_;
  size_t i_ = 0;
};

std::mutex g_settings_mu;
bool g_settings_loaded = false;
AllocatorSettings g_settings;

}  // namespace

size_t AllocatorSettings::roundup_divisions(size_t size) const {
  int idx = log2_floor(size) - 20;  // interval 0 starts at 1 MiB
  if (idx < 0) idx = 0;
  if (idx >= kRoundupIntervals) idx = kRoundupIntervals - 1;
  return roundup_power2_divisions[size_t(idx)];
}

size_t AllocatorSettings::round_size(size_t size) const {
  if (size < kMinBlockSize) return kMinBlockSize;
  if (size > kMaxRequest) return size;
  size_t div = roundup_divisions(size);
  if (div > 1 && size > kMinBlockSize * div && !is_pow2(size)) {
    size_t floor = size_t(1) << log2_floor(size);
    size_t step = floor >> log2_floor(div);
    if (step == 0) return floor << 1;
    size_t down = size & ~(step - 1);
    return down == size ? size : down + step;
  }
  return (size + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

AllocatorSettings parse_allocator_settings(const std::string& conf) {
  AllocatorSettings st = Parser(conf).parse(AllocatorSettings{});
  st.text = conf;
  return st;
}

AllocatorSettings global_allocator_settings() {
  std::lock_guard<std::mutex> lock(g_settings_mu);
  if (!g_settings_loaded) {
    const char* env = std::getenv("CUDALITE_ALLOC_CONF");
    g_settings = parse_allocator_settings(env ? env : "");
    g_settings_loaded = true;
  }
  return g_settings;
}

void set_global_allocator_settings(const AllocatorSettings& s) {
  std::lock_guard<std::mutex> lock(g_settings_mu);
  g_settings = s;
  g_settings_loaded = true;
}

std::string format_size(uint64_t size) {
  char buf[64];
  if (size <= 1024) {
    std::snprintf(buf, sizeof(buf), "%llu bytes", static_cast<unsigned long long>(size));
  } else if (size <= 1048576) {
    std::snprintf(buf, sizeof(buf), "%.2f KiB", double(size) / 1024.0);
  } else if (size <= 1073741824ULL) {
    std::snprintf(buf, sizeof(buf), "%.2f MiB", double(size) / 1048576.0);
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", double(size) / 1073741824.0);
  }
  return buf;
}

}  // namespace cl
