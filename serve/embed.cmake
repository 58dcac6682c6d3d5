# Writes OUT, a C++ file that holds the files INPUTS (separated by |) as byte arrays and defines
# maskprior::serve::page_asset (serve/page.h). Run at build time: cmake -DOUT=... -DINPUTS=a|b -P
string(REPLACE "|" ";" INPUTS "${INPUTS}")
set(code "// Generated from serve/page/ by serve/embed.cmake: edit those files, not this one.\n")
string(APPEND code "#include \"serve/page.h\"\n\nnamespace maskprior::serve {\nnamespace {\n")
set(lookup "")
foreach(input IN LISTS INPUTS)
  get_filename_component(name ${input} NAME)
  get_filename_component(extension ${input} LAST_EXT)
  string(MAKE_C_IDENTIFIER ${name} id)
  file(READ ${input} hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(APPEND code "const unsigned char k_${id}[] = {${bytes}};\n")
  if(extension STREQUAL ".html")
    set(type "text/html; charset=utf-8")
  elseif(extension STREQUAL ".js")
    set(type "text/javascript; charset=utf-8")
  else()
    set(type "text/css; charset=utf-8")
  endif()
  string(APPEND lookup "  if (name == \"${name}\") {\n"
    "    return PageAsset{{reinterpret_cast<const char*>(k_${id}), sizeof k_${id}}, \"${type}\"};\n"
    "  }\n")
endforeach()
string(APPEND code "}  // namespace\n\nstd::optional<PageAsset> page_asset(std::string_view name) {\n"
  "${lookup}  return std::nullopt;\n}\n\n}  // namespace maskprior::serve\n")
file(WRITE ${OUT}.new "${code}")
file(COPY_FILE ${OUT}.new ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.new)
