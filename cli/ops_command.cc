#include "ops_command.h"

#include <dlfcn.h>

#include <iostream>

#include "opreg/dispatch/library.h"

namespace opreg::cli {
namespace {

constexpr char kUsage[] =
    "usage: opreg ops [--load LIB.so]... [--schemas] [NAME]\n"
    "Lists the operators registered by the loaded libraries (one name per line, or their\n"
    "schemas with --schemas), or, given NAME (ns::op or ns::op.overload), dumps that op:\n"
    "schema, where it was defined, kernels per dispatch key with their locations, the dispatch\n"
    "table, out-variant link and symmetric-memory arguments.\n"
    "  --load LIB.so   dlopen a kernel library first (its OPREG_LIBRARY blocks register then)\n";

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
    // RTLD_GLOBAL: kernel libraries may call ops of libraries loaded before them.
    if (dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      std::cerr << "opreg ops: cannot load " << path << ": " << dlerror() << "\n";
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
