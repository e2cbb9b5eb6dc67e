#pragma once
// cudaDeviceSynchronize, checked. The runtime's Buffer::upload (cuMemcpyHtoD from pageable memory) may
// return before the DMA has landed, and it is ordered only with the legacy default stream, not with the
// non-blocking streams the benchmark times on: after uploading operands, wait for the whole device.
namespace isaac::bench {

void device_synchronize(const char* where);

}  // namespace isaac::bench
