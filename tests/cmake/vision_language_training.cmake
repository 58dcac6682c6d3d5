# Tests of the vision and language experiments: patches and augmentation, the patch
# model, the impulse init, and tiny runs of fashion-mnist and fortunes-char on toy data.
maskprior_test(vision_language_training_test
  SOURCES vision_language_training_test.cpp
  LIBS maskprior_train maskprior_compiler maskprior_tasks ZLIB::ZLIB fmt::fmt)
