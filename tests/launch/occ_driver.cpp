// Feeds NVIDIA's cuda_occupancy.h one case per stdin line and prints its answer, so the
// Python port (explorer/launch/occupancy.py) can be compared with the header's own method.
//
// Input, whitespace separated, one case per line:
//   major minor maxThreadsPerBlock maxThreadsPerSM regsPerBlock regsPerSM warpSize
//   smemPerBlock smemPerSM smemPerBlockOptin reservedSmemPerBlock
//   blockSize numRegs dynamicSmem carveoutConfig cacheConfig
// Output, one line per case:
//   status activeBlocks limitingFactors blockLimitRegs blockLimitSmem blockLimitWarps
//   blockLimitBlocks allocatedRegsPerBlock allocatedSmemPerBlock
#include <cstdio>
#include <cuda_occupancy.h>

int main() {
    int major, minor, maxTpb, maxTpsm, regsPerBlock, regsPerSm, warp;
    long long smemPerBlock, smemPerSm, smemOptin, reserved;
    int blockSize, numRegs, carveout, cacheConfig;
    long long dynSmem;
    while (std::scanf("%d %d %d %d %d %d %d %lld %lld %lld %lld %d %d %lld %d %d", &major, &minor, &maxTpb,
                      &maxTpsm, &regsPerBlock, &regsPerSm, &warp, &smemPerBlock, &smemPerSm, &smemOptin,
                      &reserved, &blockSize, &numRegs, &dynSmem, &carveout, &cacheConfig) == 16) {
        cudaOccDeviceProp prop;
        prop.computeMajor = major;
        prop.computeMinor = minor;
        prop.maxThreadsPerBlock = maxTpb;
        prop.maxThreadsPerMultiprocessor = maxTpsm;
        prop.regsPerBlock = regsPerBlock;
        prop.regsPerMultiprocessor = regsPerSm;
        prop.warpSize = warp;
        prop.sharedMemPerBlock = (size_t)smemPerBlock;
        prop.sharedMemPerMultiprocessor = (size_t)smemPerSm;
        prop.numSms = 1;
        prop.sharedMemPerBlockOptin = (size_t)smemOptin;
        prop.reservedSharedMemPerBlock = (size_t)reserved;

        // An ordinary kernel as cudaFuncGetAttributes would describe it, having opted in to
        // exactly the dynamic shared memory it launches with.
        cudaOccFuncAttributes attr;
        attr.maxThreadsPerBlock = 1024;
        attr.numRegs = numRegs;
        attr.sharedSizeBytes = 0;
        attr.partitionedGCConfig = PARTITIONED_GC_OFF;
        attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
        attr.maxDynamicSharedSizeBytes = (size_t)dynSmem;
        attr.numBlockBarriers = 1;
        attr.virtualResourceCount = 0;

        cudaOccDeviceState state;
        state.cacheConfig = (cudaOccCacheConfig)cacheConfig;
        state.carveoutConfig = carveout;

        cudaOccResult res = {};
        cudaOccError err = cudaOccMaxActiveBlocksPerMultiprocessor(&res, &prop, &attr, &state, blockSize, (size_t)dynSmem);
        std::printf("%d %d %u %d %d %d %d %d %lld\n", (int)err, res.activeBlocksPerMultiprocessor,
                    res.limitingFactors, res.blockLimitRegs, res.blockLimitSharedMem, res.blockLimitWarps,
                    res.blockLimitBlocks, res.allocatedRegistersPerBlock, (long long)res.allocatedSharedMemPerBlock);
    }
    return 0;
}
