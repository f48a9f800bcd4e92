#include "ops_command.h"

#include <dlfcn.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "input_file.h"
#include "opreg/dispatch/library.h"

namespace opreg::cli {
namespace {

constexpr char kUsage[] =
    "usage: opreg ops [--load LIB.so]... [--schemas] [NAME]\n"
    "Lists the operators registered by the loaded libraries (one name per line, or their\n"
    "schemas with --schemas), or, given NAME (ns::op or ns::op.overload), dumps that op:\n"
    "schema, where it was defined, kernels per dispatch key with their locations, the dispatch\n"
    "table, out-variant link and symmetric-memory arguments.\n"
    "  --load LIB.so   dlopen a kernel library first (its OPREG_LIBRARY, TORCH_LIBRARY or\n"
    "                  STABLE_TORCH_LIBRARY blocks register then). A Python extension module\n"
    "                  loads too: its Python symbols come from libpython ($OPREG_LIBPYTHON, or\n"
    "                  the first libpython3.N found), and its module init never runs.\n";

// Makes a libpython global so that an extension module's Python symbols resolve. The module's
// init is never called, so any libpython 3 will do for listing its ops.
bool LoadLibpython() {
  if (const char* env = std::getenv("OPREG_LIBPYTHON"); env != nullptr && env[0] != '\0') {
    return dlopen(env, RTLD_NOW | RTLD_GLOBAL) != nullptr;
  }
  for (int minor = 14; minor >= 8; --minor) {
    for (const char* suffix : {".so.1.0", ".so"}) {
      const std::string name = "libpython3." + std::to_string(minor) + suffix;
      if (dlopen(name.c_str(), RTLD_NOW | RTLD_GLOBAL) != nullptr) return true;
    }
  }
  return false;
}

// dlopen with lazy binding (functions a library never calls, such as a Python module's init,
// need not resolve) and RTLD_GLOBAL (kernel libraries may call ops of libraries loaded before
// them). A library whose Python data symbols do not resolve is retried with libpython loaded.
bool LoadKernelLibrary(const std::string& path, std::string* error) {
  if (dlopen(path.c_str(), RTLD_LAZY | RTLD_GLOBAL) != nullptr) return true;
  *error = dlerror();
  const bool python_symbol = error->find("undefined symbol: Py") != std::string::npos ||
                             error->find("undefined symbol: _Py") != std::string::npos;
  if (!python_symbol) return false;
  if (!LoadLibpython()) {
    *error += " (a Python extension module: no libpython3 was found to load it with; set "
              "OPREG_LIBPYTHON to one)";
    return false;
  }
  if (dlopen(path.c_str(), RTLD_LAZY | RTLD_GLOBAL) != nullptr) return true;
  *error = dlerror();
  return false;
}

}  // namespace

int RunOpsCommand(const std::vector<std::string>& args) {
  std::vector<std::string> libraries;
  std::string name;
  bool schemas = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (a == "--load") {
      if (i + 1 >= args.size()) {
        std::cerr << "opreg ops: --load needs a library path\n" << kUsage;
        return 2;
      }
      libraries.push_back(args[++i]);
    } else if (a == "--schemas") {
      schemas = true;
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "opreg ops: unknown option " << a << "\n" << kUsage;
      return 2;
    } else if (name.empty()) {
      name = a;
    } else {
      std::cerr << "opreg ops: give one op name at most\n" << kUsage;
      return 2;
    }
  }
  for (const std::string& path : libraries) {
    std::string error;
    // A path (not a bare name dlopen looks up) must be a regular file: dlopen of a FIFO
    // blocks until a writer comes.
    if (path.find('/') != std::string::npos && !CheckRegularFile(path, &error)) {
      std::cerr << "opreg ops: cannot load " << path << ": " << error << "\n";
      return 2;
    }
    if (!LoadKernelLibrary(path, &error)) {
      std::cerr << "opreg ops: cannot load " << path << ": " << error << "\n";
      return 2;
    }
  }
  int status = 0;
  for (const std::string& error : StaticRegistrationErrors()) {
    std::cerr << "registration error: " << error << "\n";
    status = 1;
  }
  Dispatcher& dispatcher = Dispatcher::Get();
  if (!name.empty()) {
    absl::StatusOr<std::string> dump = dispatcher.DumpOp(name);
    if (!dump.ok()) {
      std::cerr << "opreg ops: " << dump.status().message() << "\n";
      return 1;
    }
    std::cout << *dump;
    return status;
  }
  for (const OperatorName& op : dispatcher.ListOps()) {
    if (schemas) {
      std::cout << dispatcher.FindOpOrThrow(op.str()).schema().str() << "\n";
    } else {
      std::cout << op.str() << "\n";
    }
  }
  return status;
}

}  // namespace opreg::cli
