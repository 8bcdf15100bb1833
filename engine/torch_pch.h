// Precompiled header for the engine modules that use LibTorch (runtime, model, optim, train).
// Only .cpp files include torch; engine headers that widgets see stay torch-free.
#pragma once
#include <torch/torch.h>
