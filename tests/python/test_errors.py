import numpy as np
import pytest

import opreg


@pytest.mark.parametrize("kind,exc", [
    ("ValueError", ValueError), ("TypeError", TypeError), ("KeyError", KeyError),
    ("NotImplementedError", NotImplementedError), ("IndexError", IndexError),
    ("RuntimeError", RuntimeError),
])
def test_error_kinds_map_to_python(kind, exc):
    with pytest.raises(exc, match="the message"):
        opreg._C._raise_error(kind, "the message")


@pytest.mark.parametrize("code,exc", [
    (3, ValueError),          # InvalidArgument
    (5, KeyError),            # NotFound
    (12, NotImplementedError),  # Unimplemented
    (11, IndexError),         # OutOfRange
    (9, RuntimeError),        # FailedPrecondition
    (6, RuntimeError),        # AlreadyExists
])
def test_status_codes_map_to_python(code, exc):
    with pytest.raises(exc, match="status text"):
        opreg._C._raise_status(code, "status text")


def test_wrong_argument_type_names_op_and_argument():
    with pytest.raises(TypeError, match=r"\[_opreg_test::scale\] argument 'alpha' \(#1\): expected float, got str"):
        opreg.ops._opreg_test.scale(opreg.ones(2), "x")
    with pytest.raises(TypeError, match="expected Tensor"):
        opreg.ops._opreg_test.noop1(3)


def test_binding_errors():
    x = opreg.ones(2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'beta'"):
        opreg.ops._opreg_test.scale(x, beta=1.0)
    with pytest.raises(TypeError, match="takes 2 positional arguments but 3 were given"):
        opreg.ops._opreg_test.scale(x, 1.0, 2)
    with pytest.raises(TypeError, match="multiple values for argument 'alpha'"):
        opreg.ops._opreg_test.scale(x, 1.0, alpha=2.0)
    with pytest.raises(TypeError, match="argument 'x' \\(#0\\): expected a value"):
        opreg.ops._opreg_test.scale(alpha=2.0)


def test_kernel_value_error_from_cpp():
    with pytest.raises(ValueError, match="scale: expected float32"):
        opreg.ops._opreg_test.scale(np.ones(2, np.float64))


def test_lookup_errors():
    with pytest.raises(KeyError):
        opreg.dump_op("nowhere::nothing")
    with pytest.raises(KeyError):
        opreg.schema("nowhere::nothing")


def test_missing_kernel_is_not_implemented_or_runtime(ns):
    lib = opreg.Library(ns, "FRAGMENT")
    lib.define("nokernel(Tensor x) -> Tensor")
    with pytest.raises((NotImplementedError, RuntimeError), match="nokernel"):
        getattr(opreg.ops, ns).nokernel(opreg.ones(1))


def test_python_exception_propagates_with_traceback(ns):
    lib = opreg.Library(ns, "FRAGMENT")
    lib.define("boom(Tensor x) -> Tensor")

    class Boom(Exception):
        pass

    def boom(x):
        raise Boom("from the kernel")

    lib.impl("boom", boom, "CPU")
    with pytest.raises(Boom, match="from the kernel") as info:
        getattr(opreg.ops, ns).boom(opreg.ones(1))
    # The traceback reaches into the kernel.
    names = [entry.name for entry in info.traceback]
    assert "boom" in names
    # Also when the Python kernel is called from C++ code.
    with pytest.raises(Boom):
        opreg.ops._opreg_test.apply_twice(f"{ns}::boom", opreg.ones(1))


def test_schema_errors_are_value_errors(ns):
    lib = opreg.Library(ns, "FRAGMENT")
    with pytest.raises(ValueError, match="col"):
        lib.define("bad(Tensor x -> Tensor")
    with pytest.raises(ValueError):
        opreg.Library(ns, "NOPE")


def test_ints_beyond_int64_name_the_op_and_argument():
    x = opreg.ones((2, 3))
    with pytest.raises(ValueError, match=r"\[opreg::add\] argument 'alpha' \(#2\): expected an "
                                         r"int in \[-2\*\*63, 2\*\*63\), got 9223372036854775808"):
        opreg.ops.opreg.add(x, x, alpha=2**63)
    with pytest.raises(ValueError, match=r"\[_opreg_test::scale\] argument 'repeat' \(#2\)"):
        opreg.ops._opreg_test.scale(x, 1.0, repeat=-2**70)


def test_bad_shapes_say_which_size():
    with pytest.raises(ValueError, match=r"shape: size #1 = 9223372036854775808 is out of int64"):
        opreg.empty((2, 2**63))
    with pytest.raises(TypeError, match=r"shape: size #0 must be an int, got <class 'str'>"):
        opreg.zeros(("a",))
    with pytest.raises(TypeError, match="shape: expected an int or a sequence of ints"):
        opreg.ones("abc")
    assert opreg.empty(np.int64(3)).shape == (3,)


def test_written_argument_partially_overlapping_an_input_is_refused():
    buf = np.arange(40, dtype=np.float32)
    x = buf[:16].reshape(2, 8)
    out = buf[4:20].reshape(2, 8)  # shares 12 elements with x, shifted
    w = np.ones(8, np.float32)
    with pytest.raises(ValueError, match=r"\[opreg::rms_norm.out\] argument 'out' \(#3\) "
                                         r"partially overlaps argument 'input' \(#0\)"):
        opreg.ops.opreg.rms_norm.out(x, w, 1e-6, out=out)
    # Disjoint views of one buffer are fine.
    opreg.ops.opreg.rms_norm.out(buf[:16].reshape(2, 8), w, 1e-6, out=buf[16:32].reshape(2, 8))
