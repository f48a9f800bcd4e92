"""opreg.cuda: the per-thread current stream that CUDA ops launch on (settings only; the launch
itself is tested by the C++ [cuda] tests where a GPU exists)."""
import threading

import pytest

import opreg


class _TorchLikeStream:
    """The two attributes opreg.cuda reads from a torch.cuda.Stream."""

    class _Device:
        index = 2

    device = _Device()
    cuda_stream = 0x5000


def test_default_is_the_legacy_stream_and_guards_restore():
    assert opreg.cuda.current_stream(0) == 0
    with opreg.cuda.stream(0x1000):
        assert opreg.cuda.current_stream(0) == 0x1000
        with opreg.cuda.stream(0x2000, device=0):
            assert opreg.cuda.current_stream(0) == 0x2000
        assert opreg.cuda.current_stream(0) == 0x1000
    assert opreg.cuda.current_stream(0) == 0


def test_restored_after_an_exception():
    with pytest.raises(RuntimeError, match="boom"):
        with opreg.cuda.stream(0x1234, device=1):
            raise RuntimeError("boom")
    assert opreg.cuda.current_stream(1) == 0


def test_stream_objects_use_their_own_device():
    with opreg.cuda.stream(_TorchLikeStream()):
        assert opreg.cuda.current_stream(2) == 0x5000
        assert opreg.cuda.current_stream(0) == 0
    assert opreg.cuda.current_stream(2) == 0


def test_the_setting_is_per_thread():
    seen = []
    with opreg.cuda.stream(0x77):
        t = threading.Thread(target=lambda: seen.append(opreg.cuda.current_stream(0)))
        t.start()
        t.join()
    assert seen == [0]


def test_bad_streams_and_devices_are_refused():
    with pytest.raises(TypeError, match="expected a cudaStream_t value"):
        opreg.cuda.set_stream("stream0")
    with pytest.raises(ValueError, match="CUDA device index 99 is out of range"):
        opreg.cuda.set_stream(0, device=99)


def test_device_count_agrees_with_availability():
    assert opreg.cuda.is_available() == (opreg.cuda.device_count() > 0)
