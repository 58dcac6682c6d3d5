# Every pass-corpus and shipped spec checked cell for cell against an independent reference.
maskprior_test(spec_reference_test SOURCES spec_reference_test.cpp LIBS maskprior_compiler)
