/* TESSERA_API marks what libtessera.so exports: the classes and functions of include/tessera/
 * and the C API. libtessera is compiled with hidden visibility by default, so everything else
 * (tessera's internals and the fmt and spdlog code inside it) stays private to the library and
 * cannot clash with an application's own. A C header, as tessera.h includes it.
 * TESSERA_BUILDING_LIBRARY is defined only while compiling libtessera; applications (and the
 * static library, which needs no attributes) see an empty TESSERA_API. */
#ifndef TESSERA_EXPORT_H
#define TESSERA_EXPORT_H

#if defined(TESSERA_BUILDING_LIBRARY) && (defined(__GNUC__) || defined(__clang__))
#define TESSERA_API __attribute__((visibility("default")))
#else
#define TESSERA_API
#endif

#endif
