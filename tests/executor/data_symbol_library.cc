// A shared object whose nrt_register_kernels is data, not a function: loading it must be refused
// (calling it would jump into data). tests/executor/kernel_registry_test.
extern "C" {
extern const unsigned char nrt_register_kernels[16];
const unsigned char nrt_register_kernels[16] = {0xde, 0xad, 0xbe, 0xef};
}
