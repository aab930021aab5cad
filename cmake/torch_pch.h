// Precompiled header for every target that uses libtorch (compile time on 2 cores).
#pragma once
#include <torch/torch.h>
