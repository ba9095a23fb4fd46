internal import Glibc

/// Time and waiting, injected so that expiry, refresh-early and retry delays are tested deterministically.
public protocol Clock: Sendable {
    /// Seconds since the Unix epoch.
    func now() -> Double
    /// Blocks the calling thread for `seconds`.
    func sleep(_ seconds: Double)
}

/// The monotonic clock (CLOCK_MONOTONIC): deadlines and elapsed times, which a jump of the wall clock must not move.
/// (The file cache's once-a-second look uses CLOCK_MONOTONIC_COARSE itself: a clock read without a system call.)
public enum Monotonic {
    /// Seconds since an arbitrary start (boot).
    public static func seconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// The system clock (CLOCK_REALTIME) and nanosleep.
public struct SystemClock: Clock {
    public init() {}

    public func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    public func sleep(_ seconds: Double) {
        guard seconds > 0 else { return }
        var req = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var rem = timespec()
        while nanosleep(&req, &rem) != 0 && errno == EINTR { req = rem }
    }
}
