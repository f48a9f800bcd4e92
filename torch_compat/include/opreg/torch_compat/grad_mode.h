// opreg::torch_compat: libtorch's autograd mode guards (c10::InferenceMode, torch::NoGradGuard,
// c10::AutoGradMode) for kernel code that sets them around tensor math.
//
// opreg keeps no autograd graph in C++ (gradients are torch's, through opreg.torch), so every
// tensor op here already behaves as under inference mode; the guards record the mode only so
// that is_enabled() answers as libtorch's would inside them. Thread safety: the modes are per
// thread, as in libtorch; a guard must be destroyed on the thread that made it.
#pragma once

namespace opreg::torch_compat {

struct GradModeState {
  bool grad_enabled = true;
  bool inference = false;
};

inline GradModeState& ThreadGradMode() {
  thread_local GradModeState state;
  return state;
}

}  // namespace opreg::torch_compat

namespace c10 {

// Inference mode on (or, with false, off) for this thread until the guard is destroyed.
class InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true) : saved_(::opreg::torch_compat::ThreadGradMode()) {
    auto& s = ::opreg::torch_compat::ThreadGradMode();
    s.inference = enabled;
    if (enabled) s.grad_enabled = false;
  }
  ~InferenceMode() { ::opreg::torch_compat::ThreadGradMode() = saved_; }
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;
  static bool is_enabled() { return ::opreg::torch_compat::ThreadGradMode().inference; }

 private:
  ::opreg::torch_compat::GradModeState saved_;
};

struct GradMode {
  static bool is_enabled() { return ::opreg::torch_compat::ThreadGradMode().grad_enabled; }
  static void set_enabled(bool enabled) {
    ::opreg::torch_compat::ThreadGradMode().grad_enabled = enabled;
  }
};

// Grad mode set to `enabled` until the guard is destroyed.
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : prev_(GradMode::is_enabled()) {
    GradMode::set_enabled(enabled);
  }
  ~AutoGradMode() { GradMode::set_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};

struct NoGradGuard : public AutoGradMode {
  NoGradGuard() : AutoGradMode(/*enabled=*/false) {}
};

}  // namespace c10

namespace at {
using ::c10::AutoGradMode;
using ::c10::GradMode;
using ::c10::InferenceMode;
using ::c10::NoGradGuard;
}  // namespace at
