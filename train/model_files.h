// What a trained model leaves in its run folder, as file data: every parameter and buffer as
// safetensors tensors, and the learned M as a mask file.
#pragma once

#include <string>

#include "core/compiled_mask.h"
#include "core/layout.h"
#include "io/safetensors.h"
#include "runtime/experiment.h"
#include "runtime/model.h"

namespace maskprior::training {

/// Every parameter and buffer of `model` by name, on the CPU: floats as F32, bools as U8,
/// integers as I64.
SafetensorsData model_tensors(runtime::MaskedTransformer& model);

/// Copies every parameter and buffer of `model` from `data` (as model_tensors names them); first
/// installs a mask M and a hard mask when `data` holds them (`mask`, `hard`), as the trained model
/// had. InputError naming `path` and the tensor when one is missing or has another shape.
void load_model_tensors(runtime::MaskedTransformer& model, const SafetensorsData& data,
                        const std::string& path);
/// The test rows of an experiment as file data (test_rows.safetensors): its tensors as
/// model_tensors writes them, and "format" and its info (JSON) in the metadata.
SafetensorsData test_rows_tensors(const runtime::TestRows& rows);

/// The learned M as a mask file: the spec's metadata and provenance with M replaced, or (no spec,
/// mask-zero) a mask named "zero" over `layout`.
CompiledMask learned_mask(runtime::MaskedTransformer& model, const CompiledMask* spec,
                          const Layout& layout);

}  // namespace maskprior::training
