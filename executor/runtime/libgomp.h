// The entry points of libgomp (GNU OpenMP) that nrt calls, declared here: omp.h comes with gcc
// only, and the sanitizer builds are clang's (whose own omp.h is libomp's). GOMP_parallel is what
// gcc emits for `#pragma omp parallel`; calling it directly keeps -fopenmp out of the build.
// Linked through @system//:gomp.
#pragma once

extern "C" {
void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);
void omp_set_num_threads(int threads);
int omp_get_thread_num();
int omp_get_num_threads();
int omp_in_parallel();
}
