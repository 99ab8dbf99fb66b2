# Turns hardware_catalogue.json into a C++ header holding the text (cmake -P, at build time, so an
# edited catalogue rebuilds the library). Inputs: -DINPUT=json -DOUTPUT=header.
file(READ "${INPUT}" text)
# A raw string literal with a delimiter the JSON cannot contain; split into chunks because
# compilers limit the length of one literal.
string(LENGTH "${text}" length)
set(body "")
set(offset 0)
while(offset LESS length)
  string(SUBSTRING "${text}" ${offset} 8000 chunk)
  string(APPEND body "R\"tbcat(${chunk})tbcat\"\n")
  math(EXPR offset "${offset} + 8000")
endwhile()
file(WRITE "${OUTPUT}.tmp" "// Generated from core/hardware/hardware_catalogue.json by embed_catalogue.cmake. Do not edit.\n#pragma once\nnamespace tunebench::hardware {\ninline constexpr const char kHardwareCatalogueJson[] =\n${body};\n}  // namespace tunebench::hardware\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
