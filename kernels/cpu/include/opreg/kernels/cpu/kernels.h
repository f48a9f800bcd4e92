// Every CPU kernel of opreg's built-in ops.
#pragma once

#include "opreg/kernels/cpu/add.h"
#include "opreg/kernels/cpu/fused_add_rms_norm.h"
#include "opreg/kernels/cpu/linear.h"
#include "opreg/kernels/cpu/mul.h"
#include "opreg/kernels/cpu/per_token_quant.h"
#include "opreg/kernels/cpu/rms_norm.h"
#include "opreg/kernels/cpu/silu_and_mul.h"
#include "opreg/kernels/cpu/softmax.h"
#include "opreg/kernels/cpu/split_add.h"
#include "opreg/kernels/cpu/topk.h"
