#if canImport(Glibc)
    @preconcurrency import Glibc
#elseif canImport(Darwin)
    @preconcurrency import Darwin
#endif
import SyncSimCLI

// Standard output is line-buffered even when it is a pipe or a file, as standard error is
// unbuffered: a command's header line (`sweep: …`, `suite: …`) then comes before the progress
// lines that follow it on standard error, in `2>&1 | tee log` as on a terminal, and the
// progress lines of `bench targets` and `bench run` show as they are printed. Fully buffered,
// they came out only at exit (the bench commands flushed by hand until then).
setvbuf(stdout, nil, _IOLBF, 0)
SyncSimCommand.main()
