"""`@opreg.custom_op`: an op defined by a Python function, its schema inferred from type hints
exactly as `torch.library.infer_schema` does."""
from __future__ import annotations

import collections.abc
import inspect
import numbers
import sys
import types
import typing
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

from . import _C, _op_events
from ._annotations import annotated_values, kernel_for
from ._schema_objects import FunctionSchema
from .library import Library

UNKNOWN_MUTATES = "unknown"
# torch.types.Number
Number = Union[int, float, bool]


def _torch_types() -> Dict[Any, str]:
    """torch.dtype / torch.device, when torch is already imported (never imported here)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return {}
    return {torch.dtype: "ScalarType", torch.device: "Device", torch.Tensor: "Tensor"}


def _derived_types(base_type: Any, cpp_type: str, list_base: bool, optional_base_list: bool,
                   optional_list_base: bool) -> List[tuple]:
    result: List[tuple] = [(base_type, cpp_type), (typing.Optional[base_type], f"{cpp_type}?")]

    def derived_seq_types(typ: Any) -> tuple:
        return (
            typing.Sequence[typ],  # type: ignore[valid-type]
            typing.List[typ],  # type: ignore[valid-type]
            types.GenericAlias(collections.abc.Sequence, (typ,)),
            types.GenericAlias(list, (typ,)),
        )

    if list_base:
        result.extend((t, f"{cpp_type}[]") for t in derived_seq_types(base_type))
    if optional_base_list:
        result.extend((t, f"{cpp_type}?[]") for t in derived_seq_types(typing.Optional[base_type]))
    if optional_list_base:
        result.extend((typing.Optional[t], f"{cpp_type}[]?") for t in derived_seq_types(base_type))
    return result


def _supported_param_types() -> Dict[Any, str]:
    data: List[tuple] = [
        # (python type, schema type, type[] variant, type?[] variant, type[]? variant)
        (_C.Tensor, "Tensor", True, True, False),
        (int, "SymInt", True, False, True),
        (float, "float", True, False, True),
        (bool, "bool", True, False, True),
        (str, "str", False, False, False),
        (Number, "Scalar", True, False, False),  # torch.types.Number
        (numbers.Number, "Scalar", True, False, False),
    ]
    extra = _torch_types()
    for py_type, name in extra.items():
        if name == "Tensor":
            data.append((py_type, "Tensor", True, True, False))
        else:
            data.append((py_type, name, False, False, False))
    result: List[tuple] = []
    for line in data:
        result.extend(_derived_types(*line))
    return dict(result)


def _supported_return_types() -> Dict[Any, str]:
    r: Dict[Any, str] = {
        _C.Tensor: "Tensor",
        typing.List[_C.Tensor]: "Tensor[]",
        list[_C.Tensor]: "Tensor[]",
        int: "SymInt",
        float: "float",
        bool: "bool",
        numbers.Number: "Scalar",
        Number: "Scalar",
    }
    torch = sys.modules.get("torch")
    if torch is not None:
        r.update({torch.Tensor: "Tensor", typing.List[torch.Tensor]: "Tensor[]", list[torch.Tensor]: "Tensor[]"})
    return r


def _tuple_to_list(tuple_type: Any) -> Any:
    type_args = getattr(tuple_type, "__args__", None)
    if tuple_type is typing.Tuple or tuple_type is tuple or type_args == ((),) or type_args is None:
        return typing.List
    if len(type_args) == 1:
        return typing.List[type_args[0]]  # type: ignore[valid-type]
    if len(type_args) == 2 and type_args[1] is Ellipsis:
        return typing.List[type_args[0]]  # type: ignore[valid-type]
    return typing.List[typing.Union[tuple(type_args)]]  # type: ignore[misc]


def _parse_return(annotation: Any, error_fn: Callable[[str], Any]) -> str:
    if annotation is None:
        return "()"
    if annotation is inspect.Parameter.empty:
        error_fn("No return type annotation was provided. Please add one.")
    supported = _supported_return_types()
    origin = typing.get_origin(annotation)
    if origin is not tuple:
        if annotation not in supported:
            error_fn(f"Return has unsupported type {annotation}. The valid types are: {supported}.")
        return supported[annotation]
    args = typing.get_args(annotation)
    for arg in args:
        if arg not in supported:
            error_fn(f"Return has unsupported type {annotation}. The valid types are: {supported}.")
    return "(" + ", ".join(supported[arg] for arg in args) + ")"


def infer_schema(prototype_function: Callable[..., Any], /, *, mutates_args: Union[str, Iterable[str]],
                 op_name: Optional[str] = None) -> str:
    """The schema of `prototype_function` from its type hints, as torch.library.infer_schema
    writes it: `(Tensor x, SymInt n, float eps=1e-05) -> Tensor`; mutated Tensors get unique
    write alias sets `Tensor(a{idx}!)`."""
    sig = inspect.signature(prototype_function)

    def error_fn(what: str) -> None:
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    def convert_type_string(annotation_type: str) -> Any:
        env = dict(typing.__dict__)
        env.update(getattr(prototype_function, "__globals__", {}))
        env.update({"Tensor": _C.Tensor, "opreg": sys.modules["opreg"]})
        try:
            return eval(annotation_type, env)
        except Exception:
            error_fn(f"Unsupported type annotation {annotation_type}. It is not a type.")

    supported = _supported_param_types()
    params: List[str] = []
    seen_args = set()
    saw_kwarg_only_arg = False
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            error_fn("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == inspect.Parameter.KEYWORD_ONLY:
            if not saw_kwarg_only_arg:
                params.append("*")
                saw_kwarg_only_arg = True
        if param.annotation is inspect.Parameter.empty:
            error_fn(f"Parameter {name} must have a type annotation.")
        annotation_type = param.annotation
        if type(annotation_type) == str:
            annotation_type = convert_type_string(annotation_type)
        if annotation_type not in supported:
            if getattr(annotation_type, "__origin__", None) is tuple:
                list_type = _tuple_to_list(annotation_type)
                example_type_str = "\n\n"
                if list_type in supported:
                    example_type_str = f"For example, {list_type}.\n\n"
                error_fn(
                    f"Parameter {name} has unsupported type {param.annotation}. "
                    f"We do not support Tuple inputs in schema. As a workaround, please try to use List instead. "
                    f"{example_type_str}"
                    f"The valid types are: {supported.keys()}."
                )
            else:
                error_fn(f"Parameter {name} has unsupported type {param.annotation}. "
                         f"The valid types are: {supported.keys()}.")
        schema_type = supported[annotation_type]
        if type(mutates_args) == str:
            if mutates_args != UNKNOWN_MUTATES:
                raise ValueError("mutates_args must either be a sequence of the names of "
                                 "the arguments that are mutated or the string 'unknown'. ")
            if schema_type.startswith("Tensor"):
                schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
        elif name in mutates_args:  # type: ignore[operator]
            if not schema_type.startswith("Tensor"):
                error_fn(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can be mutated")
            schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
        seen_args.add(name)
        if param.default is inspect.Parameter.empty:
            params.append(f"{schema_type} {name}")
        else:
            default_repr = None
            torch = sys.modules.get("torch")
            if param.default is None or isinstance(param.default, (int, float, bool)):
                default_repr = str(param.default)
            elif isinstance(param.default, str) or (torch is not None and isinstance(param.default, torch.device)):
                default_repr = f'"{param.default}"'
            elif torch is not None and isinstance(param.default, torch.dtype):
                default_repr = str(param.default)[len("torch."):]
            else:
                error_fn(f"Parameter {name} has an unsupported default value type {type(param.default)}. "
                         f"Please file an issue on GitHub so we can prioritize this.")
            params.append(f"{schema_type} {name}={default_repr}")
    if mutates_args != UNKNOWN_MUTATES:
        mutates_args_not_seen = set(mutates_args) - seen_args
        if len(mutates_args_not_seen) > 0:
            error_fn(f"{mutates_args_not_seen} in mutates_args were not found in "
                     f"the custom op's signature. "
                     f"mutates_args should contain the names of all args that the "
                     f"custom op mutates, or just the string 'unknown' if you don't know.")
    return_annotation = sig.return_annotation
    if type(return_annotation) == str:
        return_annotation = convert_type_string(return_annotation)
    ret = _parse_return(return_annotation, error_fn)
    if op_name is not None:
        return f"{op_name}({', '.join(params)}) -> {ret}"
    return f"({', '.join(params)}) -> {ret}"


def _has_torch_tensor(args: Sequence[Any], kwargs: Dict[str, Any]) -> bool:
    """Whether a torch.Tensor is among the arguments (torch is imported: opreg.torch is)."""
    tensor = sys.modules["torch"].Tensor
    for v in (*args, *kwargs.values()):
        if isinstance(v, tensor):
            return True
        if isinstance(v, (list, tuple)) and any(isinstance(e, tensor) for e in v):
            return True
    return False


_DEVICE_KEYS = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", "default": "CompositeExplicit", None: ""}


class CustomOpDef:
    """An op made by `@opreg.custom_op`: callable, with `register_fake` and `register_kernel`."""

    def __init__(self, namespace: str, name: str, schema: str, fn: Callable[..., Any],
                 device_types: Optional[Sequence[str]] = None, tags: Any = ()) -> None:
        self._namespace = namespace
        self._name = name
        self._qualname = f"{namespace}::{name}"
        self._init_fn = fn
        self._lib = _library_allowing_overwrite(self._qualname)
        try:
            self._lib.define(f"{name}{schema}", tags=tags)
        except BaseException:
            self._destroy()
            raise
        self._schema = FunctionSchema(_C.schema(self._qualname))
        self._has_fake = False
        # A torch-style body (torch annotations) makes a torch-style op: kernels registered
        # later get torch values too, annotated or not, as they would under torch.
        self._torch_values = annotated_values(fn) is True
        kernel = kernel_for(fn, self._schema, self._torch_values)
        for key in self._keys(device_types):
            self._lib.impl(name, kernel, key, _check_aliasing=True)
        # A mutating op without returns gets a trivial fake implementation (as torch does).
        if self._schema.endswith("-> ()") and "!" in self._schema:
            self._lib.register_meta(name, lambda *args, **kwargs: None)
            self._has_fake = True
        self._overload: Optional[_C.OpOverload] = None
        self.__name__ = name
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    @staticmethod
    def _keys(device_types: Optional[Union[str, Sequence[str]]]) -> List[str]:
        if device_types is None:
            return ["CPU", "CUDA"]
        if isinstance(device_types, str):
            device_types = [device_types]
        keys = []
        for d in device_types:
            if d not in _DEVICE_KEYS:
                raise ValueError(f"Unknown device type {d!r} (expected 'cpu', 'cuda' or 'meta')")
            keys.append(_DEVICE_KEYS[d])
        return keys

    @property
    def schema(self) -> FunctionSchema:
        """The canonical schema (a str, with torch's FunctionSchema attributes)."""
        return self._schema

    @property
    def name(self) -> str:
        return self._qualname

    @property
    def _opoverload(self) -> _C.OpOverload:
        if self._overload is None:
            from ._ops import ops

            self._overload = getattr(ops, self._namespace).__getattr__(self._name).default
        return self._overload

    def register_fake(self, fn: Callable[..., Any], /) -> Callable[..., Any]:
        """Registers the fake (torch.library's meaning: torch's tracing and opreg's Meta key both
        call it; see Library.register_fake); usable as a decorator."""
        self._lib.register_fake(self._name, fn)
        self._has_fake = True
        return fn

    def register_meta(self, fn: Callable[..., Any], /) -> Callable[..., Any]:
        """Registers an opreg-only Meta kernel (Library.register_meta); usable as a decorator."""
        self._lib.register_meta(self._name, fn)
        self._has_fake = True
        return fn

    def register_kernel(self, device_types: Union[str, Sequence[str]],
                        fn: Optional[Callable[..., Any]] = None, /) -> Callable[..., Any]:
        """Registers `fn` for `device_types` ("cpu", "cuda"); usable as a decorator."""

        def inner(f: Callable[..., Any]) -> Callable[..., Any]:
            # Its own annotations decide; an unannotated kernel follows the op's body.
            asked = annotated_values(f)
            kernel = kernel_for(f, self._schema,
                                self._torch_values if asked is None else asked)
            for key in self._keys(device_types):
                self._lib.impl(self._name, kernel, key, _check_aliasing=True)
            return f

        return inner if fn is None else inner(fn)

    def register_autograd(self, backward: Callable[..., Any], /, *,
                          setup_context: Optional[Callable[..., Any]] = None) -> None:
        """torch's CustomOpDef.register_autograd: gradients flow through the op when it is
        called from torch (`torch.ops.<ns>`, through `opreg.torch`, which this imports; needs
        torch). Same as `opreg.register_autograd(self.name, ...)`."""
        from .library import register_autograd

        register_autograd(self._qualname, backward, setup_context=setup_context)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # With torch tensors, once opreg.torch is imported, the call goes through the torch op
        # as torch.library.custom_op's does: autograd (register_autograd), torch.compile and
        # version counters see it. Otherwise it is an opreg.ops call.
        # Looked up on each call, never kept: after a redefinition the torch op is another.
        # None: opreg.torch is not imported, or torch refused the op (skipped() says why).
        torch_op = _op_events.torch_op_of(self._qualname)
        if torch_op is not None and _has_torch_tensor(args, kwargs):
            return torch_op(*args, **kwargs)
        return self._opoverload(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"

    def _destroy(self) -> None:
        if _op_events.CUSTOM_OPS.get(self._qualname) is self._lib:
            del _op_events.CUSTOM_OPS[self._qualname]
        self._lib._destroy()


def _library_allowing_overwrite(qualname: str) -> Library:
    """The Library a custom_op's op lives in, kept for the process (as torch keeps a custom_op's:
    the op outlives its CustomOpDef object); an earlier custom_op of the same name is destroyed
    first, so defining the name again replaces the op, as with torch.library.custom_op."""
    previous = _op_events.CUSTOM_OPS.pop(qualname, None)
    if previous is not None:
        previous._destroy()
    lib = Library(qualname.split("::", 1)[0], "FRAGMENT")
    _op_events.CUSTOM_OPS[qualname] = lib
    return lib


def custom_op(name: str, fn: Optional[Callable[..., Any]] = None, /, *,
              mutates_args: Union[str, Iterable[str]],
              device_types: Optional[Union[str, Sequence[str]]] = None,
              schema: Optional[str] = None, tags: Any = None) -> Any:
    """Wraps a function into an opreg op `ns::name`, as torch.library.custom_op.

    The schema is inferred from the type hints (or given as `schema`, without the name);
    `mutates_args` names the Tensor arguments written in place ("unknown": all of them).
    The function is the op's kernel for `device_types` (default: CPU and CUDA). It may not
    return an input or a view of one. `tags`: opreg.Tag / torch.Tag values or names."""

    def inner(f: Callable[..., Any]) -> CustomOpDef:
        if "::" not in name:
            raise ValueError(f"Expected `name` to be of the form \"namespace::name\", but got {name!r}")
        namespace, opname = name.split("::", 1)
        if schema is None:
            schema_str = infer_schema(f, mutates_args=mutates_args)
        else:
            schema_str = schema
            expected = set(_mutated_args(schema_str))
            if mutates_args != UNKNOWN_MUTATES and expected != set(mutates_args):
                raise ValueError(
                    f"Attempted to create a custom op with `mutates_args={mutates_args}` "
                    f"and `schema={schema}. The schema suggests that the op mutates {expected}"
                    f"which is different from what was provided to us in `mutates_args`. "
                    f"Please make these consistent.")
        _check_no_kwarg_only_tensors(schema_str)
        op = CustomOpDef(namespace, opname, schema_str, f, device_types, tags or ())
        return op

    if fn is None:
        return inner
    return inner(fn)


def _mutated_args(schema: str) -> List[str]:
    """Names of the arguments a schema (without name) writes."""
    s = schema.strip()
    args = s[s.index("(") + 1: s.rindex("->")].rsplit(")", 1)[0]
    out = []
    depth = 0
    cur = ""
    for ch in args + ",":
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            part = cur.strip()
            if "!" in part:
                out.append(part.split()[-1].split("=")[0])
            cur = ""
        else:
            cur += ch
    return out


def _check_no_kwarg_only_tensors(schema: str) -> None:
    s = schema.strip()
    args = s[s.index("(") + 1: s.rindex("->")].rsplit(")", 1)[0]
    if "*" not in args:
        return
    kw = args.split("*", 1)[1]
    if "Tensor" in kw:
        raise ValueError("custom_op with kwarg-only Tensor args. Please make your tensors not kwarg-only. "
                         f"Got: {schema}")
