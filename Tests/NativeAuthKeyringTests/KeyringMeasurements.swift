import Foundation
import NativeAuthCore
import Testing

@testable import NativeAuthKeyring

/// The time of one `lookup` with each store — cold: each connects (Secret Service: socket, authentication, Hello,
/// OpenSession, SearchItems, GetSecrets; kernel keyring: KEYCTL_GET_PERSISTENT, KEYCTL_SEARCH, KEYCTL_READ). Measured,
/// never asserted; runs only when asked (the numbers are quoted in SecretServiceKeyStore.swift):
///
///     NATIVEAUTH_KEYRING_BENCH=1 swift test --filter KeyringMeasurements      (add -c release for release numbers)
@Suite("Keyring measurements", .serialized)
struct KeyringMeasurements {
    static let enabled = ProcessInfo.processInfo.environment["NATIVEAUTH_KEYRING_BENCH"] != nil
    static let runs = 51

    /// The median, minimum and maximum of `runs` timings of `body`, in milliseconds; and the first one.
    func measure(_ body: () throws -> Void) rethrows -> (first: Double, median: Double, min: Double, max: Double) {
        var times: [Double] = []
        for _ in 0..<Self.runs {
            let start = Monotonic.seconds()
            try body()
            times.append((Monotonic.seconds() - start) * 1000)
        }
        let sorted = times.sorted()
        return (times[0], sorted[sorted.count / 2], sorted[0], sorted[sorted.count - 1])
    }

    func report(_ what: String, _ m: (first: Double, median: Double, min: Double, max: Double)) {
        let f = { (v: Double) in String(format: "%.3f", v) }
        print(
            "\(what): median \(f(m.median)) ms (min \(f(m.min)), max \(f(m.max)), first \(f(m.first)); "
                + "\(Self.runs) runs)"
        )
    }

    @Test("one lookup, each store", .enabled(if: enabled))
    func lookups() throws {
        let ss = try PrivateSecretService()
        let secretService = SecretServiceKeyStore(busAddress: ss.address)
        let kernel = KernelKeyringStore()
        let (key, _) = try randomKey()
        let path = uniqueCachePath()
        defer { _ = try? kernel.remove(cachePath: path) }
        try secretService.store(key, cachePath: path)
        try kernel.store(key, cachePath: path)

        report(
            "Secret Service lookup (connect … GetSecrets)",
            try measure { _ = try secretService.lookup(cachePath: path) }
        )
        report(
            "Secret Service lookup, no item (connect … SearchItems)",
            try measure {
                _ = try secretService.lookup(cachePath: "/no/such/cache.json")
            }
        )
        report("kernel keyring lookup", try measure { _ = try kernel.lookup(cachePath: path) })
        report(
            "Secret Service store (connect … CreateItem)",
            try measure { try secretService.store(key, cachePath: path) }
        )
        report("kernel keyring store", try measure { try kernel.store(key, cachePath: path) })
    }
}
