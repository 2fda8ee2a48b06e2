// PROTOCOL B loader: dlopen a plugin, read its versioned table (ABI 1, 2 or 3: ABI 3 adds the
// precision profile), and call `run` (or, for a VJP case, ABI 2's `vjp`) with the case as plain C structs and a host whose `alloc_output` is the
// only way an output comes back.
#include "einfuzz/backends/plugin.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <optional>
#include <vector>

#include "einfuzz/backends/process.hpp"
#include "einfuzz/core/check_case.hpp"
#include "einfuzz/core/check_reduce.hpp"
#include "einfuzz/core/text.hpp"
#include "einfuzz/plugin.h"
#include "process_wire.hpp"

namespace einfuzz {

namespace {

/// A non-null address for empty buffers: the ABI promises data pointers are never NULL.
alignas(16) constexpr std::byte kEmpty[16] = {};

std::vector<std::string> string_list(const char* const* list, std::vector<std::string> fallback) {
  if (list == nullptr) return fallback;
  std::vector<std::string> out;
  // A bound, so a table missing its NULL terminator cannot walk memory forever.
  for (std::size_t i = 0; i < 64 && list[i] != nullptr; ++i) out.emplace_back(list[i]);
  return out;
}

/// An ABI-3 table's precision profile (`accumulate`, `round_inputs`: "DTYPE=VALUE" strings) into
/// `caps`, read exactly as PROTOCOL A's hello keys (one decoder, the same diagnostics); why not.
std::optional<std::string> read_profiles(const einfuzz_plugin& table, Capabilities& caps) {
  nlohmann::json hello = nlohmann::json::object();
  const auto add = [&](const char* key, const char* const* list) -> std::optional<std::string> {
    if (list == nullptr) return std::nullopt;
    nlohmann::json& object = hello[key] = nlohmann::json::object();
    for (const std::string& entry : string_list(list, {})) {
      const auto eq = entry.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == entry.size()) {
        return std::string(key) + " entry \"" + backend_text(entry, 60) + "\" is not DTYPE=VALUE";
      }
      object[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
    return std::nullopt;
  };
  if (auto why = add("accumulate", table.accumulate)) return why;
  if (auto why = add("round_inputs", table.round_inputs)) return why;
  return wire::decode_profiles(hello, caps);
}

einfuzz_dtype c_dtype(DType d) {
  switch (d) {
    case DType::f32: return EINFUZZ_F32;
    case DType::f64: return EINFUZZ_F64;
    case DType::i32: return EINFUZZ_I32;
    case DType::i64: return EINFUZZ_I64;
    case DType::f16: return EINFUZZ_F16;
    case DType::bf16: return EINFUZZ_BF16;
    case DType::boolean: break;
  }
  return EINFUZZ_BOOL;
}

/// The lock a plugin's calls take turns on: one per library file (`key`, its canonical path), shared
/// by the instances loaded from private copies (load_plugin_backend): their own globals are apart,
/// but a C++ plugin's unique symbols (STB_GNU_UNIQUE: inline and template statics) bind to the first
/// copy's, so the copies are not independent of each other.
std::mutex& call_lock(const std::string& key) {
  static std::mutex guard;
  static std::map<std::string, std::unique_ptr<std::mutex>> locks;
  const std::lock_guard<std::mutex> g(guard);
  std::unique_ptr<std::mutex>& m = locks[key];
  if (!m) m = std::make_unique<std::mutex>();
  return *m;
}

/// The file the dynamic loader loaded `handle` from, or "" when it does not say.
std::string loaded_from(void* handle) {
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr) return {};
  return map->l_name;
}

/// The library at `file` loaded from a private copy, or nullptr when the copy cannot be written or
/// loaded (a full or noexec temporary directory). dlopen gives every later load of a file the
/// handle of the first, and with it the globals the other instance has been changing; a copy under
/// another name is a library of its own. The copy is unlinked once loaded (its mapping stays).
void* load_private_copy(const std::string& file) {
  const char* tmp = std::getenv("TMPDIR");
  std::string name = std::string(tmp && *tmp ? tmp : "/tmp") + "/einfuzz-plugin-XXXXXX.so";
  const int out = ::mkstemps(name.data(), 3);
  if (out < 0) return nullptr;
  bool copied = false;
  if (const int in = ::open(file.c_str(), O_RDONLY | O_CLOEXEC); in >= 0) {
    char buffer[1 << 16];
    copied = true;
    for (ssize_t got; (got = ::read(in, buffer, sizeof buffer)) != 0;) {
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        copied = false;
        break;
      }
      for (ssize_t done = 0; done < got;) {
        const ssize_t wrote = ::write(out, buffer + done, static_cast<std::size_t>(got - done));
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) {
          copied = false;
          break;
        }
        done += wrote;
      }
      if (!copied) break;
    }
    ::close(in);
  }
  copied = ::close(out) == 0 && copied;
  void* handle = copied ? ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr;
  ::unlink(name.c_str());
  return handle;
}

std::uint64_t checksum(std::span<const std::byte> bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::byte b : bytes) h = (h ^ static_cast<std::uint64_t>(b)) * 0x100000001b3ULL;
  return h;
}

/// The state behind one `run` or `vjp` call's einfuzz_host.
struct HostState {
  const Limits* limits = nullptr;
  const Case* request = nullptr;  // the case asked: an answer may not announce far more than it needs
  DType out_dtype = DType::f64;
  bool vjp = false;             // a vjp call (else run)
  std::size_t due = 1;          // outputs the call may allocate: 1 for run, one per input for vjp
  std::vector<Tensor> outputs;  // in allocation order
  std::int64_t allocated = 0;   // elements over every output so far (bounded by the limits)
  std::string refusal;  // why alloc_output returned NULL (first reason)
  std::string code;
  std::string message;

  static void* alloc_output(void* context, int32_t rank, const int64_t* shape) {
    auto* self = static_cast<HostState*>(context);
    const auto refuse = [&](std::string why) -> void* {
      if (self->refusal.empty()) self->refusal = std::move(why);
      return nullptr;
    };
    if (self->outputs.size() >= self->due) {
      return refuse(!self->vjp ? std::string("alloc_output was called a second time")
                                   : "alloc_output was called " + std::to_string(self->due + 1) +
                                         " times for a VJP of " + std::to_string(self->due) + " inputs");
    }
    // Checked before the shape is read: a correct answer's rank is within the case's bound.
    const std::size_t most = answer_rank_bound(*self->request);
    if (rank < 0 || static_cast<std::size_t>(rank) > most) {
      return refuse("alloc_output: rank " + std::to_string(rank) + " is not in 0.." + std::to_string(most) +
                    " (no answer to this case has more dimensions)");
    }
    if (rank > 0 && shape == nullptr) return refuse("alloc_output: a NULL shape for rank " + std::to_string(rank));
    Shape s(shape, shape + rank);
    for (std::int64_t d : s) {
      if (d < 0) return refuse("alloc_output: negative length " + std::to_string(d));
    }
    // The limits decide before anything proportional to the shape is allocated.
    auto size = check_tensor_size(s, *self->limits, "the plugin's output");
    if (!size) return refuse("alloc_output: huge shape " + format_shape(s) + ": " + size.error().message);
    // A VJP's outputs together stay within what one output may hold.
    if (auto all = check_tensor_size(Shape{self->allocated + *size}, *self->limits, "the plugin's outputs together"); !all) {
      return refuse("alloc_output: huge shapes: " + all.error().message);
    }
    if (auto why = wire::oversized_answer(*self->request, Shape{self->allocated + *size}, *self->limits)) {
      return refuse("alloc_output: " + *why);
    }
    self->allocated += *size;
    self->outputs.emplace_back(self->out_dtype, std::move(s));
    auto bytes = self->outputs.back().bytes();
    if (bytes.empty()) return const_cast<std::byte*>(kEmpty);
    // Harness-owned storage of a non-const tensor, handed out for the plugin to fill.
    return const_cast<std::byte*>(bytes.data());
  }

  static void set_message(void* context, const char* code, const char* message) {
    auto* self = static_cast<HostState*>(context);
    // Cut at character boundaries and escaped: the text is printed and reported as it stands.
    self->code = code ? backend_text(code, 200) : std::string();
    self->message = message ? backend_text(message, 2000) : std::string();
  }
};

class PluginBackend final : public Backend {
 public:
  PluginBackend(const PluginOptions& options, void* handle, const std::string& file, const einfuzz_plugin* table,
                const Capabilities& profiles)
      : options_(options), handle_(handle), turn_(call_lock(file)), table_(table) {
    caps_.accumulate = profiles.accumulate;
    caps_.round_inputs = profiles.round_inputs;
    // A version-1 table ends at `run`: the version-2 fields are read only from a version-2 or 3 table.
    if (table->abi_version >= EINFUZZ_PLUGIN_ABI_VERSION_2 && table->vjp) {
      vjp_ = table->vjp;
      caps_.vjp = true;
      if (table->tie_rule) caps_.tie_rule = tie_rule_from_name(table->tie_rule).value_or(TieRule::equal_share);
    }
    name_ = escape_control(options.name.empty() ? "plugin:" + options.path : options.name);
    caps_.ops.clear();
    for (const auto& o : string_list(table->ops, {"einsum"})) {
      if (o == "einsum") caps_.ops.push_back(Op::einsum);
      if (o == "reduce") caps_.ops.push_back(Op::reduce);
    }
    caps_.dtypes.clear();
    for (const auto& d : string_list(table->dtypes, {"f32", "f64"})) {
      if (auto t = dtype_from_name(d)) caps_.dtypes.push_back(*t);
    }
    for (const auto& r : string_list(table->reductions, {})) {
      if (reduction_from_name(r)) caps_.reductions.push_back(r);
    }
    const std::string semantics = table->semantics ? table->semantics : "any-order";
    caps_.semantics = semantics == "ordered" ? Semantics::ordered : Semantics::any_order;
    const std::string nan = table->nan_profile ? table->nan_profile : "propagate";
    caps_.nan_profile = nan == "ignore" ? NanProfile::ignore : nan == "ordered" ? NanProfile::ordered : NanProfile::propagate;
    caps_.factoring = table->factoring != 0;
    caps_.strided_inputs = table->strided_inputs != 0;
    caps_.version = backend_text(std::string(table->name ? table->name : "?") +
                                     (table->version ? std::string(" ") + table->version : ""),
                                 200);
  }
  ~PluginBackend() override { ::dlclose(handle_); }

  std::string_view name() const override { return name_; }
  const Capabilities& capabilities() const override { return caps_; }
  // plugin.h: ids increase by one per call, also when each call runs in a forked worker.
  void ran_in_copy(const Case& c) override {
    const std::lock_guard<std::mutex> turn(turn_);
    if (!wire::not_describable_dtypes(c)) ++next_id_;
  }

  BackendResult run(const Case& c) override {
    // plugin.h promises calls from one thread at a time; a campaign's jobs share the library's
    // state (dlopen returns one handle), so they take turns.
    const std::lock_guard<std::mutex> turn(turn_);
    // One dtype per request (the plugin reads each tensor at its size), as on PROTOCOL A's wire.
    if (auto why = wire::not_describable_dtypes(c)) return Unsupported{*why};
    // From here on the plugin is called, with the next id (ran_in_copy follows this).
    // Strided storages for plugins that take them; a layout that no longer fits is sent dense.
    std::vector<std::optional<Tensor>> storages(c.inputs.size());
    if (caps_.strided_inputs && c.layouts.size() == c.inputs.size()) {
      for (std::size_t k = 0; k < c.inputs.size(); ++k) {
        if (!c.layouts[k]) continue;
        if (auto st = layout_storage(c.inputs[k], *c.layouts[k], options_.limits)) storages[k] = std::move(*st);
      }
    }
    // What the plugin is told about the case points into copies, so a plugin writing through the
    // pointers (shapes, strides, pattern, names) changes nothing the harness reads afterwards.
    std::vector<Shape> shapes;
    for (const Tensor& t : c.inputs) shapes.push_back(t.shape());
    std::vector<std::vector<std::int64_t>> strides(c.inputs.size());
    std::vector<einfuzz_tensor> inputs(c.inputs.size());
    std::vector<std::uint64_t> sums(c.inputs.size(), 0);
    for (std::size_t k = 0; k < c.inputs.size(); ++k) {
      const Tensor& t = c.inputs[k];
      einfuzz_tensor& in = inputs[k];
      in.rank = static_cast<int32_t>(t.rank());
      in.shape = t.rank() ? shapes[k].data() : nullptr;
      if (storages[k]) {
        const auto bytes = storages[k]->bytes();
        sums[k] = checksum(bytes);
        in.data = bytes.empty() ? kEmpty : bytes.data() + c.layouts[k]->offset * static_cast<std::int64_t>(dtype_size(c.dtype));
        strides[k] = c.layouts[k]->strides;
        in.strides = strides[k].data();
      } else {
        in.data = t.bytes().empty() ? kEmpty : t.bytes().data();
        in.strides = nullptr;
      }
    }
    std::vector<std::string> names;
    for (const auto& [axis, length] : c.axis_lengths) names.push_back(axis);
    std::vector<einfuzz_axis_length> lengths;
    for (std::size_t k = 0; k < names.size(); ++k) lengths.push_back({names[k].c_str(), c.axis_lengths[k].second});
    const std::string op(op_name(c.op));
    const std::string pattern = c.pattern;
    const std::optional<std::string> subscripts = c.op == Op::einsum ? numpy_subscripts(c.pattern, shapes) : std::nullopt;
    const std::string reduction = c.reduction.value_or("");

    einfuzz_request request{};
    request.id = next_id_++;
    request.op = op.c_str();
    request.pattern = pattern.c_str();
    request.subscripts = subscripts ? subscripts->c_str() : nullptr;
    request.dtype = c_dtype(c.dtype);
    request.reduction = c.op == Op::reduce ? reduction.c_str() : nullptr;
    request.axis_lengths = lengths.empty() ? nullptr : lengths.data();
    request.axis_length_count = lengths.size();
    request.inputs = inputs.empty() ? nullptr : inputs.data();
    request.input_count = inputs.size();

    HostState state;
    state.limits = &options_.limits;
    state.request = &c;
    state.out_dtype = c.op == Op::reduce && (reduction == "any" || reduction == "all") ? DType::boolean : c.dtype;
    einfuzz_host host{&state, &HostState::alloc_output, &HostState::set_message};
    // A faulty plugin may return any int: plugin.h fixes einfuzz_status's underlying type to int in
    // C++, so every value is one of the type (without it, 42 would be undefined behaviour: UBSan's
    // -fsanitize=enum), and the call goes through the function's own type (-fsanitize=function).
    int status = EINFUZZ_UNSUPPORTED;
    if (!c.is_vjp()) {
      status = static_cast<int>(table_->run(&request, &host));
    } else if (!vjp_) {
      return Unsupported{"the plugin has no vjp entry"};  // supports() says so first
    } else {
      // The cotangent: dense, the forward output's shape, the case's dtype.
      const Tensor& g = *c.cotangent;
      const Shape g_shape = g.shape();
      const einfuzz_tensor cotangent{static_cast<int32_t>(g.rank()), g.rank() ? g_shape.data() : nullptr,
                                     g.bytes().empty() ? kEmpty : g.bytes().data(), nullptr};
      state.vjp = true;
      state.due = c.inputs.size();
      status = static_cast<int>(vjp_(&request, &cotangent, &host));
    }

    for (std::size_t k = 0; k < c.inputs.size(); ++k) {
      if (storages[k] && checksum(storages[k]->bytes()) != sums[k]) {
        return Fault{FaultKind::input_modified, "the plugin wrote to the storage of strided input " + std::to_string(k)};
      }
    }
    // A refused alloc_output is the fault whatever the plugin returned after it: an error status
    // then would read as a rejection of the case (reject-disagree) with the refusal unsaid.
    if (!state.refusal.empty()) return Fault{FaultKind::protocol, state.refusal};
    switch (status) {
      case EINFUZZ_OK:
        if (c.is_vjp()) {
          if (state.outputs.size() != state.due) {
            return Fault{FaultKind::protocol, "vjp returned EINFUZZ_OK after " + std::to_string(state.outputs.size()) +
                                                  " alloc_output calls for " + std::to_string(state.due) + " inputs"};
          }
          return Gradients{std::move(state.outputs)};
        }
        if (state.outputs.empty()) return Fault{FaultKind::protocol, "run returned EINFUZZ_OK without calling alloc_output"};
        return std::move(state.outputs.front());
      case EINFUZZ_ERROR: return Rejected{state.code, state.message};
      case EINFUZZ_UNSUPPORTED: return Unsupported{state.message};
    }
    return Fault{FaultKind::protocol, "run returned the unknown status " + std::to_string(status)};
  }

 private:
  PluginOptions options_;
  void* handle_;
  std::mutex& turn_;  // call_lock(file): shared with every other instance of this library file
  const einfuzz_plugin* table_;
  einfuzz_vjp_fn vjp_ = nullptr;  // ABI 2 and 3 only
  std::string name_;
  Capabilities caps_;
  std::int64_t next_id_ = 1;
};

/// Why a table's named field is refused: set and none of `allowed` (NULL takes the default). Read
/// as strictly as a protocol-A hello: a misspelt "Ordered" would otherwise be judged any-order.
std::optional<std::string> unknown_name(const char* value, const char* field, std::initializer_list<std::string_view> allowed) {
  if (!value || std::find(allowed.begin(), allowed.end(), std::string_view(value)) != allowed.end()) return std::nullopt;
  std::string names;
  for (const std::string_view a : allowed) names += (names.empty() ? "\"" : ", \"") + std::string(a) + "\"";
  return "its " + std::string(field) + " \"" + backend_text(value, 60) + "\" is not one of " + names;
}

}  // namespace

Result<std::unique_ptr<Backend>> load_plugin_backend(const PluginOptions& options) {
  const auto bad = [&](const std::string& why) {
    return make_diagnostic(Code::invalidArgument, "plugin '" + options.path + "': " + why);
  };
  // Every backend is a new instance of the library, with globals of its own (a campaign's fresh
  // instance, fuzz_external's new one, each job's): a library loaded already is loaded again from a
  // private copy. When no copy can be made, the instances share the one library, as dlopen gives it.
  void* handle = nullptr;
  std::string file;
  if (void* loaded = ::dlopen(options.path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) {
    file = loaded_from(loaded);
    ::dlclose(loaded);
    if (!file.empty()) handle = load_private_copy(file);
  }
  ::dlerror();
  if (!handle) handle = ::dlopen(options.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = ::dlerror();
    return bad(std::string("cannot load it: ") + (e ? e : "dlopen failed"));
  }
  if (file.empty()) file = loaded_from(handle);
  if (char* canonical = ::realpath(file.c_str(), nullptr)) {
    file = canonical;
    std::free(canonical);
  }
  if (file.empty()) file = options.path;
  void* symbol = ::dlsym(handle, EINFUZZ_PLUGIN_ENTRY);
  if (!symbol) {
    ::dlclose(handle);
    return bad("it does not export the symbol " EINFUZZ_PLUGIN_ENTRY " (see <einfuzz/plugin.h>)");
  }
  const auto entry = reinterpret_cast<einfuzz_plugin_entry_fn>(symbol);
  const einfuzz_plugin* table = entry();
  std::string why;
  if (!table) {
    why = EINFUZZ_PLUGIN_ENTRY "() returned NULL";
  } else if (table->abi_version < EINFUZZ_PLUGIN_ABI_VERSION_1 || table->abi_version > EINFUZZ_PLUGIN_ABI_VERSION) {
    why = "ABI version " + std::to_string(table->abi_version) + ", this harness speaks versions " +
          std::to_string(EINFUZZ_PLUGIN_ABI_VERSION_1) + " to " + std::to_string(EINFUZZ_PLUGIN_ABI_VERSION);
  } else if (!table->run) {
    why = "its table has no run function";
  } else if (auto bad_name = unknown_name(table->semantics, "semantics", {"ordered", "any-order"})) {
    why = *bad_name;
  } else if (auto bad_nan = unknown_name(table->nan_profile, "nan_profile", {"propagate", "ignore", "ordered"})) {
    why = *bad_nan;
  } else if (auto bad_notation = unknown_name(table->notation, "notation", {"einops", "numpy"})) {
    why = *bad_notation;
  } else if (table->abi_version >= EINFUZZ_PLUGIN_ABI_VERSION_2 && table->tie_rule &&
             !tie_rule_from_name(table->tie_rule)) {
    why = "its tie_rule \"" + backend_text(table->tie_rule, 60) + "\" is not \"equal-share\", \"one\" or \"all\"";
  }
  // A version-3 table's precision profile; an unreadable one is refused like a bad tie rule (judging
  // the plugin under a profile it did not declare would be wrong in both directions).
  Capabilities profiles;
  if (table && table->semantics && std::string_view(table->semantics) == "ordered") {
    profiles.semantics = Semantics::ordered;  // an ordered plugin's profile is the dtype's (decode_profiles)
  }
  if (why.empty() && table->abi_version >= EINFUZZ_PLUGIN_ABI_VERSION) {
    if (auto bad_profile = read_profiles(*table, profiles)) why = "its precision profile: " + *bad_profile;
  }
  if (!why.empty()) {
    ::dlclose(handle);
    return bad(why);
  }
  return std::unique_ptr<Backend>(std::make_unique<PluginBackend>(options, handle, file, table, profiles));
}

}  // namespace einfuzz
