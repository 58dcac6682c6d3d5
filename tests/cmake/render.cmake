# Tests of render: the text grid and summary, the PNG heatmap (decoded with libpng).
maskprior_test(render_test
  SOURCES render_test.cpp
  LIBS maskprior_render PNG::PNG)
