#include "opreg/dispatch/library.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>

#include "opreg/core/error.h"
#include "opreg/core/logging.h"
#include "opreg/core/string_util.h"
#include "opreg/core/string_view.h"
#include "opreg/schema/schema_parser.h"

namespace opreg {
namespace {

constexpr std::string_view kWildcardNamespace = "_";

// "OPREG_LIBRARY_IMPL" for (IMPL, "OPREG_LIBRARY"), "TORCH_LIBRARY" for (DEF, "TORCH_LIBRARY").
std::string KindName(Library::Kind kind, std::string_view macro) {
  switch (kind) {
    case Library::DEF:
      return std::string(macro);
    case Library::FRAGMENT:
      return StrCat(macro, "_FRAGMENT");
    case Library::IMPL:
      return StrCat(macro, "_IMPL");
  }
  return std::string(macro);
}

// Errors of blocks run at static initialization (see StaticRegistrationErrors).
struct StaticErrors {
  std::mutex mu;
  std::vector<std::string> errors;
};
StaticErrors& GetStaticErrors() {
  static StaticErrors* const errors = new StaticErrors();
  return *errors;
}

// Keeps an error of a static block, or with OPREG_STRICT_REGISTRATION=1 ends the process with
// it: a library loaded during static initialization has no caller to throw to.
void KeepStaticError(std::string message) {
  const char* strict = std::getenv("OPREG_STRICT_REGISTRATION");
  if (strict != nullptr && std::string_view(strict) == "1") {
    std::fprintf(stderr, "opreg: registration failed (fatal: OPREG_STRICT_REGISTRATION=1): %s\n",
                 message.c_str());
    std::fflush(stderr);
    std::abort();
  }
  Logger().error("registration failed: {}", message);
  StaticErrors& errors = GetStaticErrors();
  std::lock_guard<std::mutex> lock(errors.mu);
  errors.errors.push_back(std::move(message));
}

// The schema of a kernel whose op is defined by name only (PyTorch's inferred schemas).
FunctionSchema SchemaFromSignature(OperatorName name, const InferredSignature& sig) {
  std::vector<Argument> args;
  for (size_t i = 0; i < sig.arguments.size(); ++i) {
    args.emplace_back(StrCat("_", i), sig.arguments[i], std::nullopt, std::nullopt, false,
                      std::nullopt);
  }
  // Returns are named too (`-> int _0`), as torch's make_function_schema names them.
  std::vector<Argument> returns;
  for (size_t i = 0; i < sig.returns.size(); ++i) {
    returns.emplace_back(StrCat("_", i), sig.returns[i], std::nullopt, std::nullopt, false,
                         std::nullopt);
  }
  return FunctionSchema(std::move(name), std::move(args), std::move(returns));
}

}  // namespace

template <class Body>
Library& Library::Registration(const SourceLocation& where, Body&& body) {
  if (!record_errors_ || in_registration_) {
    body();
    return *this;
  }
  in_registration_ = true;
  try {
    body();
  } catch (const Error& e) {
    in_registration_ = false;
    KeepStaticError(StrCat(e.message(), " (registration at ", where.str(), ")"));
    return *this;
  }
  in_registration_ = false;
  return *this;
}

Library::Library(Kind kind, std::string ns, std::optional<DispatchKey> key, const char* file,
                 uint32_t line, const char* macro)
    : kind_(kind),
      macro_(macro),
      ns_(std::move(ns)),
      key_(key),
      where_{file != nullptr ? file : "", static_cast<int>(line)} {
  if (ns_ == kWildcardNamespace && kind_ != IMPL) {
    Check(absl::InvalidArgumentError(StrCat(
        "cannot define ", KindName(kind_, macro_),
        " with the wildcard namespace _ (every library needs a namespace). Did you mean to use "
        "OPREG_LIBRARY_IMPL instead?")));
  }
  if (kind_ == DEF) Keep(Dispatcher::Get().RegisterLibrary(ns_, where_));
}

Library::~Library() {
  // Undo in reverse order: kernels before the defs they belong to.
  while (!handles_.empty()) handles_.pop_back();
}

std::string Library::BlockDescription() const {
  return StrCat(KindName(kind_, macro_), " block at ", where_.str());
}

void Library::Check(const absl::Status& status) const {
  if (status.ok()) return;
  ThrowIfError(absl::Status(
      status.code(),
      StrCat(status.message(), " (Error occurred while processing ", BlockDescription(), ")")));
}

void Library::Keep(absl::StatusOr<RegistrationHandle> handle) {
  Check(handle.status());
  handles_.push_back(*std::move(handle));
}

OperatorName Library::QualifiedName(std::string_view name) const {
  absl::StatusOr<std::variant<OperatorName, FunctionSchema>> parsed = ParseSchemaOrName(name);
  if (!parsed.ok() || !std::holds_alternative<OperatorName>(*parsed)) {
    Check(absl::InvalidArgumentError(StrCat(
        "'", name, "' is not an operator name (expected op, op.overload or ns::op.overload)")));
  }
  OperatorName op = std::get<OperatorName>(*std::move(parsed));
  if (!op.ns().empty() && op.ns() != ns_ && ns_ != kWildcardNamespace) {
    Check(absl::InvalidArgumentError(StrCat(
        "Explicitly provided namespace (", ToAbsl(op.ns()), ") in operator name ", op.str(),
        " does not match namespace of enclosing ", KindName(kind_, macro_), " block (", ns_, ")")));
  }
  op.SetNamespaceIfNotSet(ns_);
  return op;
}

Library& Library::def(std::string_view schema_text, std::vector<std::string> tags, const char* file,
                      int line) {
  return Registration(SourceLocation{file, line}, [&] {
    const SourceLocation where{file, line};
    if (kind_ == IMPL) {
      Check(absl::InvalidArgumentError(StrCat(
          "def(\"", schema_text,
          "\"): Cannot define an operator inside of a OPREG_LIBRARY_IMPL block. All def()s should "
          "be placed in the (unique) OPREG_LIBRARY block for their namespace.")));
    }
    absl::StatusOr<std::variant<OperatorName, FunctionSchema>> parsed =
        ParseSchemaOrName(schema_text);
    Check(parsed.status());
    auto* schema = std::get_if<FunctionSchema>(&*parsed);
    if (schema == nullptr) {
      Check(absl::InvalidArgumentError(StrCat(
          "def(\"", schema_text,
          "\"): Full schema string was not specified, and we couldn't infer schema either. Please "
          "explicitly provide a schema string, or pass a kernel to infer it from.")));
    }
    if (!schema->operator_name().ns().empty() && schema->operator_name().ns() != ns_) {
      Check(absl::InvalidArgumentError(StrCat(
          "Explicitly provided namespace (", ToAbsl(schema->operator_name().ns()),
          ") in schema string does not match namespace of enclosing ", KindName(kind_, macro_),
          " block (", ns_,
          "). Move this definition to the (unique) OPREG_LIBRARY block corresponding to this "
          "namespace (and consider deleting the namespace from your schema string.)")));
    }
    schema->SetNamespaceIfNotSet(ns_);
    Dispatcher::DefineOptions options;
    options.where = where;
    options.tags = std::move(tags);
    Keep(Dispatcher::Get().Define(std::move(*schema), std::move(options)));
  });
}

Library& Library::DefWithKernel(std::string_view schema_or_name, KernelFunction kernel,
                                SourceLocation where) {
  return Registration(SourceLocation(where), [&] {
    absl::StatusOr<std::variant<OperatorName, FunctionSchema>> parsed =
        ParseSchemaOrName(schema_or_name);
    Check(parsed.status());
    OperatorName name;
    if (std::holds_alternative<OperatorName>(*parsed)) {
      // A bare name: the schema comes from the kernel's C++ signature.
      if (kind_ == IMPL || kernel.inferred_signature() == nullptr) {
        def(schema_or_name, {}, where.file.c_str(), where.line);  // reports the error
      }
      name = QualifiedName(schema_or_name);
      Dispatcher::DefineOptions options;
      options.where = where;
      options.alias_analysis = AliasAnalysisKind::kConservative;
      Keep(Dispatcher::Get().Define(SchemaFromSignature(name, *kernel.inferred_signature()),
                                    std::move(options)));
    } else {
      def(schema_or_name, {}, where.file.c_str(), where.line);
      name = std::get<FunctionSchema>(*parsed).operator_name();
      name.SetNamespaceIfNotSet(ns_);
    }
    Keep(Dispatcher::Get().RegisterKernel(name, key_, std::move(kernel), std::move(where)));
  });
}

Library& Library::ImplKernel(std::string_view name, std::optional<DispatchKey> key,
                             KernelFunction kernel, SourceLocation where) {
  return Registration(SourceLocation(where), [&] {
    if (key && key_ && *key != *key_) {
      Check(absl::InvalidArgumentError(StrCat(
          "impl(\"", name, "\"): Explicitly provided dispatch key (", DispatchKeyName(*key),
          ") is inconsistent with the dispatch key of the enclosing OPREG_LIBRARY_IMPL block (",
          DispatchKeyName(*key_), ").")));
    }
    if (ns_ == kWildcardNamespace) {
      Check(absl::InvalidArgumentError(
          StrCat("impl(\"", name, "\"): the wildcard namespace _ registers fallbacks only")));
    }
    Keep(Dispatcher::Get().RegisterKernel(QualifiedName(name), key ? key : key_, std::move(kernel),
                                          std::move(where)));
  });
}

Library& Library::Fallback(KernelFunction kernel, SourceLocation where) {
  return Registration(SourceLocation(where), [&] {
    if (kind_ != IMPL || ns_ != kWildcardNamespace) {
      Check(absl::InvalidArgumentError(StrCat(
          "fallback(...): Fallback functions which apply to only a single namespace (you "
          "specified ",
          ns_,
          ") are not supported. If you intended to apply this fallback function globally, please "
          "define a separate block: OPREG_LIBRARY_IMPL(_, Key, m) { m.fallback(...); }")));
    }
    if (!key_) {
      Check(absl::InvalidArgumentError("fallback(...): the block has no dispatch key"));
    }
    Keep(Dispatcher::Get().RegisterFallback(*key_, std::move(kernel), std::move(where)));
  });
}

Library& Library::fail(std::string_view message, const char* file, int line) {
  return Registration(SourceLocation{file, line},
                      [&] { Check(absl::InvalidArgumentError(ToAbsl(message))); });
}

Library& Library::register_class(std::string_view name, const char* file, int line) {
  return Registration(SourceLocation{file, line}, [&] {
    if (kind_ == IMPL) {
      Check(absl::InvalidArgumentError(
          StrCat("register_class(\"", name, "\"): classes are defined in OPREG_LIBRARY blocks")));
    }
    const std::string qualified = StrCat(ns_, ".", ToAbsl(name));
    // PyTorch schemas name classes as __torch__.torch.classes.ns.Name: accept both spellings.
    Keep(Dispatcher::Get().RegisterClass(qualified, SourceLocation{file, line}));
    Keep(Dispatcher::Get().RegisterClass(StrCat("__torch__.torch.classes.", qualified),
                                         SourceLocation{file, line}));
  });
}

Library& Library::register_symm_mem_args(std::string_view op, std::vector<std::string> names,
                                         SymmMemRequirement requirement, const char* file,
                                         int line) {
  return Registration(SourceLocation{file, line}, [&] {
    Keep(Dispatcher::Get().RegisterSymmMemArgs(QualifiedName(op), names, requirement,
                                               SourceLocation{file, line}));
  });
}

Library& Library::link_out_variant(std::string_view functional, std::string_view out_op,
                                   std::vector<std::string> out_arguments, const char* file,
                                   int line) {
  return Registration(SourceLocation{file, line}, [&] {
    Keep(Dispatcher::Get().LinkOutVariant(QualifiedName(functional), QualifiedName(out_op),
                                          out_arguments, SourceLocation{file, line}));
  });
}

Library& Library::SynthesizeFunctional(std::string_view out_op, KernelFunction meta,
                                       SourceLocation where) {
  return Registration(SourceLocation(where), [&] {
    if (kind_ == IMPL) {
      Check(absl::InvalidArgumentError(StrCat("synthesize_functional(\"", out_op,
                                              "\"): defines an op, so it belongs in an "
                                              "OPREG_LIBRARY or OPREG_LIBRARY_FRAGMENT block")));
    }
    const OperatorName out_name = QualifiedName(out_op);
    absl::StatusOr<OperatorHandle> out = Dispatcher::Get().FindOpOrError(out_name.str());
    Check(out.status());
    absl::StatusOr<FunctionSchema> functional = SynthesizeFunctionalSchema(out->schema());
    Check(functional.status());
    const OperatorName name = functional->operator_name();
    Dispatcher::DefineOptions options;
    options.where = where;
    Keep(Dispatcher::Get().Define(*std::move(functional), std::move(options)));
    Keep(Dispatcher::Get().RegisterKernel(name, DispatchKey::kMeta, std::move(meta),
                                          std::move(where)));
  });
}

Library& Library::def_functional(std::string_view functional_schema, std::string_view out_op,
                                 std::vector<std::string> out_arguments,
                                 std::vector<OutputSpec> outputs, const char* file, int line) {
  return Registration(SourceLocation{file, line}, [&] {
    const SourceLocation where{file, line};
    absl::StatusOr<std::variant<OperatorName, FunctionSchema>> parsed =
        ParseSchemaOrName(functional_schema);
    Check(parsed.status());
    auto* schema = std::get_if<FunctionSchema>(&*parsed);
    if (schema == nullptr) {
      Check(absl::InvalidArgumentError(
          StrCat("def_functional(\"", functional_schema, "\"): expected a full schema")));
    }
    FunctionSchema functional = *schema;
    functional.SetNamespaceIfNotSet(ns_);
    const std::string name = functional.operator_name().str();
    if (outputs.size() != functional.returns().size()) {
      Check(absl::InvalidArgumentError(StrCat("[", name, "] def_functional: ", outputs.size(),
                                              " output specs for ", functional.returns().size(),
                                              " returns")));
    }
    try {
      for (const OutputSpec& spec : outputs) spec.Validate(functional, name);
    } catch (const Error& e) {
      Check(absl::InvalidArgumentError(e.message()));
    }
    def(functional_schema, {}, file, line);
    const OperatorName functional_name = functional.operator_name();
    Keep(Dispatcher::Get().LinkOutVariant(functional_name, QualifiedName(out_op), out_arguments,
                                          where, /*meta_only_arguments=*/true));
    Keep(Dispatcher::Get().RegisterKernel(
        functional_name, DispatchKey::kMeta,
        KernelFunction::FromBoxedFunctor(
            [functional, outputs](const OperatorHandle&, Stack* stack) {
              const size_t n = functional.arguments().size();
              Stack args(std::make_move_iterator(stack->end() - static_cast<ptrdiff_t>(n)),
                         std::make_move_iterator(stack->end()));
              stack->resize(stack->size() - n);
              for (size_t k = 0; k < outputs.size(); ++k) {
                stack->emplace_back(outputs[k].Compute(functional, args, k));
              }
            })
            .WithOutputSpecs(outputs),  // read by opreg.torch's symbolic fakes
        where));
  });
}

namespace detail {

void RecordStaticError(std::string message) { KeepStaticError(std::move(message)); }

LibraryInit::LibraryInit(Library::Kind kind, void (*init)(Library&), const char* ns,
                         std::optional<DispatchKey> key, const char* file, uint32_t line,
                         const char* macro) {
  // Errors must not escape static initialization (that would terminate the process while a
  // shared library loads): they are logged and kept for the lookups that will fail.
  // Each registration call of the block records its own error and the block goes on (see
  // Library::Registration); what still lands here failed outside a call: the block itself
  // (a second OPREG_LIBRARY for a namespace) or code of the block between calls.
  try {
    library_.emplace(kind, ns, key, file, line, macro);
    library_->record_errors_ = true;
    init(*library_);
  } catch (const Error& e) {
    KeepStaticError(e.message());
  } catch (const std::exception& e) {
    KeepStaticError(
        StrCat("exception in the ", ns, " block at ", file, ":", line, ": ", e.what()));
  }
}

}  // namespace detail

std::vector<std::string> StaticRegistrationErrors() {
  StaticErrors& errors = GetStaticErrors();
  std::lock_guard<std::mutex> lock(errors.mu);
  return errors.errors;
}

}  // namespace opreg
