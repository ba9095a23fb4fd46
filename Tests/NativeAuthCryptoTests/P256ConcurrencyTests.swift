import Foundation
import NativeAuthCrypto
import Testing

/// One key signing on many threads at once: each signature copies the key's prepared signing context, which every
/// thread reads (attack round Z on the speed change of issue 32). Run under TSan and ASan by `make test-tsan` and
/// `make test-asan`.
@Suite struct P256ConcurrencyTests {
    private final class Results: @unchecked Sendable {
        let lock = NSLock()
        var signatures: [([UInt8], [UInt8])] = []
        var failures = 0
        func add(_ message: [UInt8], _ signature: [UInt8]?) {
            lock.withLock {
                if let signature { signatures.append((message, signature)) } else { failures += 1 }
            }
        }
    }

    private static func signEverywhere(_ key: P256PrivateKey, threads: Int, each: Int) -> Results {
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for i in 0..<each {
                let message = Array("thread \(t) message \(i) \(String(repeating: "x", count: i))".utf8)
                results.add(message, try? message.withUnsafeBytes { try key.sign($0) })
            }
        }
        return results
    }

    @Test(arguments: ["generated", "restored"])
    func signaturesMadeOnManyThreadsAllVerify(_ origin: String) throws {
        let generated = try P256PrivateKey.generate()
        // A key restored from its scalar (as a cached key is, by another process) prepares its own context.
        let restored = try generated.withPrivateScalar { try? P256PrivateKey(scalar: $0) }
        let key = try #require(origin == "generated" ? generated : restored)
        let threads = 8
        let each = 64
        let results = Self.signEverywhere(key, threads: threads, each: each)
        #expect(results.failures == 0)
        #expect(results.signatures.count == threads * each)
        let verifier = try P256PublicKey(x: generated.x, y: generated.y)
        for (message, signature) in results.signatures {
            #expect(signature.count == 64)
            #expect(verifier.verify(signature: signature, message: message))
        }
        // ECDSA signatures are randomised: no two are the same (a shared nonce would leak the key).
        #expect(Set(results.signatures.map { $0.1 }).count == results.signatures.count)
    }

    /// Keys made, used on many threads and dropped while other keys sign: each key's context lives as long as it.
    @Test func keysComeAndGoWhileOthersSign() {
        let failures = Results()
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            for i in 0..<16 {
                guard let key = try? P256PrivateKey.generate() else {
                    failures.add([], nil)
                    continue
                }
                let message = Array("\(t).\(i)".utf8)
                let signature = try? message.withUnsafeBytes { try key.sign($0) }
                if let signature, key.publicKey.verify(signature: signature, message: message) { continue }
                failures.add(message, nil)
            }
        }
        #expect(failures.failures == 0)
    }
}
