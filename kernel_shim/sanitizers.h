// (no upstream counterpart) Which sanitizer this translation unit is built with: KSHIM_ASAN and
// KSHIM_TSAN are 1 or 0. gcc defines __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__; clang before
// version 15 answers only __has_feature, so testing the macros alone silently leaves a clang
// build (the fuzz targets) without the fiber annotations ASan and TSan need.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define KSHIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KSHIM_ASAN 1
#endif
#endif
#ifndef KSHIM_ASAN
#define KSHIM_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__)
#define KSHIM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KSHIM_TSAN 1
#endif
#endif
#ifndef KSHIM_TSAN
#define KSHIM_TSAN 0
#endif
