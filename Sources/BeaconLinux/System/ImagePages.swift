import CLinux

/// Asks the kernel to read this executable's pages one by one as they are first run, without
/// read-around: fault-around then maps only neighbours that are already cached, so the resident
/// set holds the code the daemon runs, not most of the 6 MB of text around it (docs/benchmarks.md,
/// "True resident memory"). Advice only: a kernel that refuses changes nothing but the figure.
public func adviseRandomImageReads() {
    _ = clinux_advise_random_image()
}
