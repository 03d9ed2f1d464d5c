"""Worked occupancy examples, shared by the example tests and the check against cuda_occupancy.h.

Each row: (cc, threads, regs, smem, active_blocks, occupancy, limiters, where it comes from).
Hand derivations use the method of cuda_occupancy.h: registers are allocated per warp in
units of 256 and split over 4 sub-partitions (2 on 6.0), so blocks_by_regs =
floor(floor(65536/4 / regs_per_warp) * 4 / warps_per_block); shared memory is allocated in
units of 256 (<= 7.x) or 128 bytes (8.x+) with 1 KB reserved per block from 8.x.
"""

EXAMPLES = [
    # --- Maxwell 5.x
    # 256 thr, 32 regs: warps 64/8 = 8; regs 32*32 = 1024/warp, 16384/1024 = 16 warps/sub-partition
    # -> 64 warps -> 8 blocks; blocks limit 32. 8 blocks x 8 warps = 64/64.
    ((5, 2), 256, 32, 0, 8, 1.0, ("warps", "registers"), "hand, GTX 980"),
    # 128 thr, 64 regs: 2048/warp -> 8 warps/sub-partition -> 32 warps -> 8 blocks of 4 warps = 32/64.
    ((5, 0), 128, 64, 0, 8, 0.5, ("registers",), "hand, GTX 750 Ti"),
    # 1024 thr, 40 regs: 1280/warp -> 12 warps/sub-partition -> 48 warps -> 1 block of 32 warps.
    ((5, 0), 1024, 40, 0, 1, 0.5, ("registers",), "hand"),
    # --- Pascal 6.x
    # 64 thr, 32 regs: warps 64/2 = 32, blocks 32, regs 64 warps / 2 = 32: a three-way tie.
    ((6, 1), 64, 32, 0, 32, 1.0, ("warps", "blocks", "registers"), "hand, GTX 1080"),
    # GP100, 2 sub-partitions: 1024 thr, 64 regs: 2048/warp, 32768/2048 = 16 warps x 2 = 32 -> 1 block.
    ((6, 0), 1024, 64, 0, 1, 0.5, ("registers",), "hand, Tesla P100"),
    # 6.1, 256 thr, 16000 B smem: 16000 -> 16128 (unit 256); 98304/16128 = 6 blocks x 8 warps = 48/64.
    ((6, 1), 256, 32, 16000, 6, 0.75, ("shared_memory",), "hand"),
    # --- Volta 7.0 / 7.2
    # CUDA C++ Best Practices Guide, 'Calculating Occupancy': on 7.0, 128-thread blocks with 37
    # registers give 12 active blocks, 75%; 320-thread blocks with 37 registers only 4 blocks
    # (1184 -> 1280 per warp, 12 warps/sub-partition = 48 warps; 48/4 = 12, 48/10 = 4).
    ((7, 0), 128, 37, 0, 12, 0.75, ("registers",), "CUDA Best Practices Guide"),
    ((7, 0), 320, 37, 0, 4, 0.625, ("registers",), "CUDA Best Practices Guide"),
    # 7.2, 64 thr, 32 regs, 0 smem: warps 32, blocks 32, regs 32 -> 32 blocks x 2 warps = 64/64.
    ((7, 2), 64, 32, 0, 32, 1.0, ("warps", "blocks", "registers"), "hand, Jetson Xavier"),
    # --- Turing 7.5 (32 warps and 16 blocks per SM)
    # 256 thr, 32 regs: warps 32/8 = 4; regs 8; -> 4 blocks = 32/32 (the occupancy calculator's default).
    ((7, 5), 256, 32, 0, 4, 1.0, ("warps",), "hand, GTX 1650 / occupancy calculator"),
    # 128 thr, 32 regs, 20000 B: 20000 -> 20224; 65536/20224 = 3 blocks x 4 warps = 12/32.
    ((7, 5), 128, 32, 20000, 3, 0.375, ("shared_memory",), "hand"),
    # 64 thr: warps would allow 16, blocks allow 16 -> 16 x 2 warps = 32/32; regs allow 32.
    ((7, 5), 64, 32, 0, 16, 1.0, ("warps", "blocks"), "hand"),
    # --- Ampere 8.0 / 8.6 / 8.7
    # A100, 256 thr, 32 regs, 0 smem: warps 8, regs 8; smem 1 KB reserve -> 167936/1024 = 164.
    ((8, 0), 256, 32, 0, 8, 1.0, ("warps", "registers"), "hand, A100"),
    # A100, 256 thr, 48 KB: 49152 + 1024 = 50176 (multiple of 128), opt-in limit applies;
    # 167936/50176 = 3 blocks x 8 warps = 24/64.
    ((8, 0), 256, 32, 49152, 3, 0.375, ("shared_memory",), "hand"),
    # RTX 3080: 1024 thr -> warps 48/32 = 1 block = 32/48: the GA10x 1536-thread lesson.
    ((8, 6), 1024, 32, 0, 1, 32 / 48, ("warps",), "hand, RTX 3080"),
    # 256 thr, 64 regs: 2048/warp -> 8 warps/sub-partition -> 32 warps -> 4 blocks = 32/48.
    ((8, 6), 256, 64, 0, 4, 32 / 48, ("registers",), "hand"),
    # 64 thr on 8.6: blocks limit 16 -> 16 x 2 = 32/48.
    ((8, 6), 64, 32, 0, 16, 32 / 48, ("blocks",), "hand"),
    # Orin, 768 thr, 32 regs: warps 48/24 = 2; regs 64/24 = 2 -> 2 x 24 = 48/48.
    ((8, 7), 768, 32, 0, 2, 1.0, ("warps", "registers"), "hand, Jetson Orin"),
    # --- Ada 8.9 (24 blocks per SM)
    # 64 thr: warps 24, blocks 24 -> 24 x 2 = 48/48.
    ((8, 9), 64, 32, 0, 24, 1.0, ("warps", "blocks"), "hand, RTX 4090"),
    # 128 thr, 30000 B: 31024 -> 31104; 102400/31104 = 3 blocks x 4 warps = 12/48.
    ((8, 9), 128, 32, 30000, 3, 0.25, ("shared_memory",), "hand"),
    # --- Hopper 9.0
    # 128 thr, 100000 B: 101024 -> 101120; 233472/101120 = 2 blocks x 4 warps = 8/64.
    ((9, 0), 128, 32, 100000, 2, 0.125, ("shared_memory",), "hand, H100"),
    # 1024 thr, 32 regs: warps 2, regs 2 -> 2 x 32 = 64/64.
    ((9, 0), 1024, 32, 0, 2, 1.0, ("warps", "registers"), "hand, H100"),
    # --- Blackwell 10.x / 11.0 / 12.x
    # B200, 256 thr, 128 regs: 4096/warp -> 4 warps/sub-partition -> 16 warps -> 2 blocks = 16/64.
    ((10, 0), 256, 128, 0, 2, 0.25, ("registers",), "hand, B200"),
    # 10.3, 32 thr: blocks limit 32 -> 32 x 1 warp = 32/64.
    ((10, 3), 32, 32, 0, 32, 0.5, ("blocks",), "hand, B300"),
    # Thor (11.0), 1024 thr: warps 48/32 = 1 -> 32/48.
    ((11, 0), 1024, 32, 0, 1, 32 / 48, ("warps",), "hand, Jetson Thor"),
    # RTX 5090, 512 thr: warps 48/16 = 3, regs 64/16 = 4 -> 3 x 16 = 48/48.
    ((12, 0), 512, 32, 0, 3, 1.0, ("warps",), "hand, RTX 5090"),
    # 32 thr on 12.0: blocks limit 24 -> 24/48.
    ((12, 0), 32, 32, 0, 24, 0.5, ("blocks",), "hand, RTX 5090"),
    # DGX Spark (12.1), 256 thr, 40 KB: 41984 -> 41984 (x128); 102400/41984 = 2 x 8 warps = 16/48.
    ((12, 1), 256, 32, 40960, 2, 16 / 48, ("shared_memory",), "hand, DGX Spark"),
]
