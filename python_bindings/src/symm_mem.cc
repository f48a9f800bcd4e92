// opreg._C._symm_mem: symmetric memory (host backend) for Python. Groups over a FileStore,
// symmetric `empty`, and the rendezvous handle of an allocation (signals, barriers, peers'
// buffers). The collectives themselves are ops (`opreg.ops.symm_mem.*`); `opreg.symm_mem`
// wraps both.
//
// Threading: every call that may block on peers (group creation and destruction, the
// collective allocation of `empty`, barriers and signal waits) releases the GIL while it waits,
// so other Python threads keep running. Errors are opreg::Error and map to Python exceptions
// like the rest of the module (a timed-out wait is a RuntimeError naming the peer and channel).
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_join.h"
#include "module_internal.h"
#include "opreg/core/error.h"
#include "opreg/core/tensor_factories.h"
#include "opreg/symm_mem/store.h"
#include "opreg/symm_mem/symmetric_memory.h"

namespace opreg::python {

namespace {

namespace sm = ::opreg::symm_mem;

std::optional<sm::Millis> TimeoutArg(const std::optional<double>& seconds, const char* what) {
  if (!seconds) return std::nullopt;
  OPREG_CHECK_VALUE(std::isfinite(*seconds) && *seconds >= 0, what,
                    ": timeout_s must be a finite number >= 0, got ", *seconds);
  // A timeout past what the clock can count (1e30 s) means no deadline, not an overflow.
  const double ms = *seconds * 1000.0;
  if (ms >= static_cast<double>(sm::Millis::max().count())) return sm::Millis::max();
  return sm::Millis(static_cast<int64_t>(std::llround(ms)));
}

// ParseDTypeArg with the function named in its error (a bare "unknown dtype" does not say
// which call it came from).
DType DTypeArgOf(py::handle dtype, const char* what) {
  try {
    return ParseDTypeArg(dtype);
  } catch (const Error& e) {
    throw Error(e.kind(), StrCat(what, ": argument 'dtype': ", e.message()));
  }
}

// The rendezvous handle: the allocation holding a tensor, plus that tensor's layout (relative
// to this rank's buffer) so that `buffer(rank)` can present a peer's copy the same way.
struct PyHandle {
  std::shared_ptr<sm::SymmetricMemory> mem;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  DType dtype = DType::kFloat32;
  size_t byte_offset = 0;  // of the tensor's data in the buffer

  void CheckRank(int rank, const char* what) const {
    OPREG_CHECK_INDEX(rank >= 0 && rank < mem->world_size(), "symm_mem handle.", what, ": rank ",
                      rank, " is not in [0, world_size ", mem->world_size(), ") of group '",
                      mem->group_name(), "'");
  }
};

// A tensor over `rank`'s copy of the allocation (as mapped in this process); it keeps the
// allocation (and so the heap mappings) alive.
Tensor PeerView(const PyHandle& h, int rank, const std::vector<int64_t>& sizes,
                const std::vector<int64_t>& strides, DType dtype, size_t byte_offset) {
  char* base = static_cast<char*>(h.mem->buffer_ptr(rank)) + byte_offset;
  std::shared_ptr<sm::SymmetricMemory> keep = h.mem;
  return from_blob(base, sizes, strides, dtype, Device::cpu(),
                   [keep](void*) mutable { keep.reset(); });
}

std::shared_ptr<sm::Store> StoreArg(py::handle store) {
  if (py::isinstance<sm::FileStore>(store)) return store.cast<std::shared_ptr<sm::FileStore>>();
  if (py::isinstance<py::str>(store) || py::hasattr(store, "__fspath__")) {
    std::string path = py::str(py::module_::import("os").attr("fspath")(store));
    return std::make_shared<sm::FileStore>(std::move(path));
  }
  throw Error(ErrorKind::kType,
              StrCat("symm_mem.create_group: store must be a directory path or a FileStore, got ",
                     std::string(py::str(py::type::handle_of(store).attr("__name__")))));
}

}  // namespace

void InitSymmMem(py::module_& parent) {
  py::module_ m = parent.def_submodule(
      "_symm_mem", "Symmetric memory (host backend): groups, symmetric tensors, rendezvous");

  py::class_<sm::FileStore, std::shared_ptr<sm::FileStore>>(
      m, "FileStore", "A key-value store with one file per key in a directory (shared by ranks).")
      .def(py::init([](py::object path) {
             std::string p = py::str(py::module_::import("os").attr("fspath")(path));
             return std::make_shared<sm::FileStore>(std::move(p));
           }),
           py::arg("path"))
      .def_property_readonly("path", [](const sm::FileStore& s) { return s.dir(); })
      .def(
          "set",
          [](sm::FileStore& s, const std::string& key, py::bytes value) {
            std::string v = value;
            s.Set(key, v);
          },
          py::arg("key"), py::arg("value"))
      .def(
          "get",
          [](sm::FileStore& s, const std::string& key, double timeout_s) {
            std::optional<sm::Millis> t = TimeoutArg(timeout_s, "FileStore.get");
            std::string v;
            {
              py::gil_scoped_release nogil;
              v = s.Get(key, *t);
            }
            return py::bytes(v);
          },
          py::arg("key"), py::arg("timeout_s") = 30.0)
      .def(
          "add",
          [](sm::FileStore& s, const std::string& key, int64_t delta) { return s.Add(key, delta); },
          py::arg("key"), py::arg("delta"))
      .def(
          "delete", [](sm::FileStore& s, const std::string& key) { s.Delete(key); }, py::arg("key"))
      .def("__repr__", [](const sm::FileStore& s) { return StrCat("FileStore(", s.dir(), ")"); });

  m.def(
      "create_group",
      [](const std::string& name, int rank, int world_size, py::object store,
         std::optional<double> timeout_s, std::optional<int64_t> heap_bytes,
         std::optional<int> max_channels) {
        sm::GroupOptions opts;
        if (auto t = TimeoutArg(timeout_s, "symm_mem.create_group")) opts.timeout = *t;
        if (heap_bytes) {
          OPREG_CHECK_VALUE(*heap_bytes > 0, "symm_mem.create_group: heap_bytes must be > 0, got ",
                            *heap_bytes);
          opts.heap_bytes = static_cast<size_t>(*heap_bytes);
        }
        if (max_channels) opts.max_channels = *max_channels;
        std::shared_ptr<sm::Store> s = StoreArg(store);
        py::gil_scoped_release nogil;
        sm::Group::Create(name, rank, world_size, std::move(s), opts);
      },
      py::arg("name"), py::arg("rank"), py::arg("world_size"), py::arg("store"),
      py::arg("timeout_s") = py::none(), py::arg("heap_bytes") = py::none(),
      py::arg("max_channels") = py::none(),
      "Collective: creates group `name` (this process is `rank` of `world_size`), bootstrapped "
      "through `store` (a directory path or a FileStore).");
  m.def(
      "destroy_group",
      [](const std::string& name) {
        py::gil_scoped_release nogil;
        sm::Group::Destroy(name);
      },
      py::arg("name"),
      "Collective: unregisters group `name` and removes its store keys (tensors stay valid).");
  m.def(
      "group_exists", [](const std::string& name) { return sm::Group::Exists(name); },
      py::arg("name"));
  m.def(
      "group_info",
      [](const std::string& name) {
        std::shared_ptr<sm::Group> g = sm::Group::Get(name);
        py::dict d;
        d["name"] = g->name();
        d["rank"] = g->rank();
        d["world_size"] = g->world_size();
        d["heap_bytes"] = g->options().heap_bytes;
        d["max_channels"] = g->options().max_channels;
        d["timeout_s"] = static_cast<double>(g->options().timeout.count()) / 1000.0;
        d["live_allocations"] = g->live_allocations();
        return d;
      },
      py::arg("name"));
  m.def(
      "empty",
      [](py::object shape, py::object dtype, const std::string& group_name) {
        std::vector<int64_t> sizes = ShapeArg(shape);
        DType d = DTypeArgOf(dtype, "symm_mem.empty");
        Tensor t;
        {
          py::gil_scoped_release nogil;
          t = sm::empty(sizes, d, group_name);
        }
        return WrapTensor(std::move(t));
      },
      py::arg("shape"), py::arg("dtype"), py::arg("group_name"),
      "Collective: a contiguous CPU tensor in group `group_name`'s symmetric heap.");
  m.def(
      "is_symmetric",
      [](py::handle t) {
        PyTensor* pt = AsPyTensor(t);
        return pt != nullptr && sm::IsSymmetric(pt->tensor);
      },
      py::arg("tensor"));

  py::class_<PyHandle>(m, "SymmetricMemory",
                       "The rendezvous handle of a symmetric allocation (from `rendezvous`).")
      .def_property_readonly("rank", [](const PyHandle& h) { return h.mem->rank(); })
      .def_property_readonly("world_size", [](const PyHandle& h) { return h.mem->world_size(); })
      .def_property_readonly("group_name", [](const PyHandle& h) { return h.mem->group_name(); })
      .def_property_readonly("max_channels",
                             [](const PyHandle& h) { return h.mem->max_channels(); })
      .def_property_readonly("buffer_size", [](const PyHandle& h) { return h.mem->buffer_size(); })
      .def_property_readonly("alloc_id", [](const PyHandle& h) { return h.mem->alloc_id(); })
      .def(
          "barrier",
          [](PyHandle& h, int channel, std::optional<double> timeout_s) {
            std::optional<sm::Millis> t = TimeoutArg(timeout_s, "SymmetricMemory.barrier");
            py::gil_scoped_release nogil;
            h.mem->barrier(channel, t);
          },
          py::arg("channel") = 0, py::arg("timeout_s") = py::none())
      .def(
          "put_signal",
          [](PyHandle& h, int dst_rank, int channel, std::optional<double> timeout_s) {
            std::optional<sm::Millis> t = TimeoutArg(timeout_s, "SymmetricMemory.put_signal");
            py::gil_scoped_release nogil;
            h.mem->put_signal(dst_rank, channel, t);
          },
          py::arg("dst_rank"), py::arg("channel") = 0, py::arg("timeout_s") = py::none())
      .def(
          "wait_signal",
          [](PyHandle& h, int src_rank, int channel, std::optional<double> timeout_s) {
            std::optional<sm::Millis> t = TimeoutArg(timeout_s, "SymmetricMemory.wait_signal");
            py::gil_scoped_release nogil;
            h.mem->wait_signal(src_rank, channel, t);
          },
          py::arg("src_rank"), py::arg("channel") = 0, py::arg("timeout_s") = py::none())
      .def(
          "buffer",
          [](const PyHandle& h, int rank) {
            h.CheckRank(rank, "buffer");
            return WrapTensor(PeerView(h, rank, h.sizes, h.strides, h.dtype, h.byte_offset));
          },
          py::arg("rank"),
          "`rank`'s copy of the rendezvoused tensor (same shape, strides, dtype), as mapped here.")
      .def(
          "get_buffer",
          [](const PyHandle& h, int rank, py::object shape, py::object dtype,
             int64_t storage_offset) {
            h.CheckRank(rank, "get_buffer");
            std::vector<int64_t> sizes = ShapeArg(shape);
            DType d = DTypeArgOf(dtype, "symm_mem handle.get_buffer");
            // Every product and sum below is checked: a huge shape or offset must be a clear
            // error, never a wrapped-around bound that lets the view reach the signal pads or
            // past the mapping.
            const size_t item = ItemSize(d);
            const size_t cap = h.mem->buffer_size();
            uint64_t numel = 1;
            bool overflow = false;
            for (int64_t s : sizes) {
              OPREG_CHECK_VALUE(s >= 0, "symm_mem handle.get_buffer: negative size ", s);
              overflow |= __builtin_mul_overflow(numel, static_cast<uint64_t>(s), &numel);
            }
            OPREG_CHECK_VALUE(storage_offset >= 0,
                              "symm_mem handle.get_buffer: negative storage_offset ",
                              storage_offset);
            uint64_t begin = 0, bytes = 0, end = 0;
            overflow |= __builtin_mul_overflow(static_cast<uint64_t>(storage_offset), item, &begin);
            overflow |= __builtin_mul_overflow(numel, item, &bytes);
            overflow |= __builtin_add_overflow(begin, bytes, &end);
            OPREG_CHECK_VALUE(
                !overflow && end <= cap, "symm_mem handle.get_buffer: shape ", "[",
                absl::StrJoin(sizes, ", "), "] of ", TorchDTypeName(d), " at storage_offset ",
                storage_offset, " does not fit in the allocation of ", cap, " bytes",
                overflow ? " (the byte count overflows 64 bits)" : StrCat(" (it needs ", end, ")"));
            std::vector<int64_t> strides(sizes.size());
            int64_t st = 1;
            for (size_t i = sizes.size(); i-- > 0;) {
              strides[i] = st;
              st *= std::max<int64_t>(sizes[i], 1);
            }
            return WrapTensor(PeerView(h, rank, sizes, strides, d, static_cast<size_t>(begin)));
          },
          py::arg("rank"), py::arg("shape"), py::arg("dtype"), py::arg("storage_offset") = 0,
          "A contiguous view of `rank`'s copy of the allocation (any shape/dtype that fits).")
      .def("__repr__", [](const PyHandle& h) {
        return StrCat("SymmetricMemory(group='", h.mem->group_name(), "', rank=", h.mem->rank(),
                      ", world_size=", h.mem->world_size(), ", alloc_id=", h.mem->alloc_id(),
                      ", buffer_size=", h.mem->buffer_size(), ")");
      });

  m.def(
      "rendezvous",
      [](py::handle obj) {
        PyTensor* pt = AsPyTensor(obj);
        if (pt == nullptr) {
          throw Error(ErrorKind::kType,
                      StrCat("symm_mem.rendezvous: expected an opreg.Tensor from "
                             "opreg.symm_mem.empty, got ",
                             std::string(py::str(py::type::handle_of(obj).attr("__name__")))));
        }
        const Tensor& t = pt->tensor;
        PyHandle h;
        h.mem = sm::Rendezvous(t);
        h.sizes.assign(t.sizes().begin(), t.sizes().end());
        h.strides.assign(t.strides().begin(), t.strides().end());
        h.dtype = t.dtype();
        h.byte_offset =
            static_cast<size_t>(static_cast<const char*>(t.data_ptr()) -
                                static_cast<const char*>(h.mem->buffer_ptr(h.mem->rank())));
        return h;
      },
      py::arg("tensor"),
      "The handle of the symmetric allocation holding `tensor` (local: no communication).");
}

}  // namespace opreg::python
