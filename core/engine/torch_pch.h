// Precompiled header of the engine: the libtorch headers nearly every engine file includes.
#pragma once
#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>
