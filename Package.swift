// swift-tools-version:6.0
// NativeAuth — libnativeauth.so: Microsoft Entra External ID native authentication for C, Python and friends.
//
// Layering (dependencies point down only; README.md, "Design notes"):
//   NativeAuthCABI  →  NativeAuthCache  →  NativeAuthCore  →  NativeAuthJSON / NativeAuthHTTP / NativeAuthCrypto  →
//   C system libraries. NativeAuthHTTP holds HTTP's value types only; the I/O (the libcurl transport, the loopback
//   listener) is NativeAuthNet, which the composition root (NativeAuthCABI) wires into the core's protocols.
import PackageDescription

let package = Package(
    name: "NativeAuth",
    products: [
        // The embeddable library. Built for release by `make` with -static-stdlib, a version script (only na_*
        // exported) and SONAME libnativeauth.so.1.
        .library(name: "nativeauth", type: .dynamic, targets: ["NativeAuthCABI"]),
        // The nativeauth command (installed as `nativeauth`, and as `docker-credential-nativeauth`).
        .executable(name: "nativeauth-cli", targets: ["nativeauth-cli"]),
        // The local identity server: Entra External ID native auth + OIDC + sample protected APIs.
        .executable(name: "nativeauth-emulator", targets: ["nativeauth-emulator"]),
    ],
    dependencies: [
        // The emulator's HTTP server (plain HTTP; --tls is a libssl front end of our own). Never in the library.
        .package(url: "https://github.com/swhitty/FlyingFox", exact: "0.27.1"),
        // The nativeauth command's argument parsing.
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
    ],
    targets: [
        // System libraries: a module map each, and a header with typed inline wrappers for what Swift cannot call
        // (variadic functions, function-like macros).
        .systemLibrary(name: "CJansson", pkgConfig: "jansson", providers: [.apt(["libjansson-dev"])]),
        // libcurl, loaded with dlopen at the first request (include/ccurl.h says why); its headers come from
        // libcurl4-openssl-dev.
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("dl")]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // include/nativeauth.h as a Swift module: NativeAuthCABI type-checks every export against its prototype.
        .systemLibrary(name: "CNativeAuthHeader"),
        // Linux system calls without a Swift-callable wrapper (pidfd_open, waitid on a pidfd). Header only.
        .systemLibrary(name: "CLinux"),

        .target(name: "NativeAuthJSON", dependencies: ["CJansson"]),
        .target(name: "NativeAuthCrypto", dependencies: ["COpenSSL", "NativeAuthJSON"]),
        // HTTP's value types: requests, responses, URLs, form encoding, Retry-After, WWW-Authenticate challenges, the
        // loopback redirect's messages.
        .target(name: "NativeAuthHTTP"),
        // The I/O behind the core's seams: the libcurl transport, the loopback listener of browser sign-ins, the
        // system browser launcher.
        .target(
            name: "NativeAuthNet",
            dependencies: ["CCurl", "COpenSSL", "CLinux", "NativeAuthCrypto", "NativeAuthHTTP", "NativeAuthCore"]
        ),
        .target(
            name: "NativeAuthCore",
            dependencies: ["NativeAuthJSON", "NativeAuthCrypto", "NativeAuthHTTP"]
        ),
        // The persistent token cache: MSAL's unified cache format in a locked, atomically replaced file.
        .target(name: "NativeAuthCache", dependencies: ["NativeAuthCore", "NativeAuthJSON", "NativeAuthCrypto"]),
        // Where a file cache's key is kept: the Secret Service (our own D-Bus client over the session bus's Unix
        // socket; no GLib or libsecret) and the persistent kernel keyring (keyctl through CLinux).
        .target(
            name: "NativeAuthKeyring",
            dependencies: ["NativeAuthCore", "NativeAuthCache", "NativeAuthCrypto", "CLinux"]
        ),
        .target(
            name: "NativeAuthCABI",
            dependencies: [
                "NativeAuthCore", "NativeAuthCache", "NativeAuthJSON", "NativeAuthHTTP", "NativeAuthNet",
                "NativeAuthKeyring", "CNativeAuthHeader", "CLinux",
            ],
            exclude: ["nativeauth.map"]
        ),

        // The emulator. It shares JSON and crypto helpers with the library and no protocol code; token signing
        // (RSA private keys) lives here, never in the library.
        .systemLibrary(name: "COpenSSLTLS", pkgConfig: "libssl", providers: [.apt(["libssl-dev"])]),
        .target(name: "CEmulatorTLS", dependencies: ["COpenSSLTLS"]),
        .target(
            name: "NativeAuthEmulator",
            dependencies: [
                "NativeAuthJSON", "NativeAuthCrypto", "COpenSSL", "CEmulatorTLS",
                .product(name: "FlyingFox", package: "FlyingFox"),
                .product(name: "FlyingSocks", package: "FlyingFox"),
            ]
        ),
        .executableTarget(name: "nativeauth-emulator", dependencies: ["NativeAuthEmulator"]),

        // The profile file's TOML subset (the command's; its own tests and fuzz target).
        .target(name: "NativeAuthTOML"),
        // The nativeauth command: the library in-process through its C ABI (the same documents a C program uses).
        .executableTarget(
            name: "nativeauth-cli",
            dependencies: [
                "NativeAuthCABI", "NativeAuthJSON", "NativeAuthCrypto", "NativeAuthTOML", "NativeAuthKeyring",
                "NativeAuthCache", "CNativeAuthHeader",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // Test helpers: a loopback HTTP/1.1 server that counts connections and misbehaves on request.
        .target(
            name: "NativeAuthTestSupport",
            dependencies: ["NativeAuthCore", "NativeAuthHTTP", "NativeAuthNet", "NativeAuthJSON", "NativeAuthCrypto"],
            path: "Tests/NativeAuthTestSupport"
        ),

        .testTarget(name: "NativeAuthJSONTests", dependencies: ["NativeAuthJSON"]),
        .testTarget(name: "NativeAuthTOMLTests", dependencies: ["NativeAuthTOML"]),
        .testTarget(
            name: "NativeAuthCLITests",
            dependencies: ["nativeauth-cli", "NativeAuthJSON", "NativeAuthTestSupport"]
        ),
        .testTarget(
            name: "NativeAuthCryptoTests",
            dependencies: ["NativeAuthCrypto", "NativeAuthJSON", "NativeAuthEmulator"]
        ),
        .testTarget(
            name: "NativeAuthHTTPTests",
            dependencies: [
                "NativeAuthHTTP", "NativeAuthNet", "NativeAuthCore", "NativeAuthJSON", "NativeAuthTestSupport",
            ]
        ),
        .testTarget(
            name: "NativeAuthCoreTests",
            dependencies: [
                "NativeAuthCore", "NativeAuthJSON", "NativeAuthHTTP", "NativeAuthNet", "NativeAuthCrypto",
                "NativeAuthTestSupport",
            ]
        ),
        .testTarget(
            name: "NativeAuthCacheTests",
            dependencies: ["NativeAuthCache", "NativeAuthCore", "NativeAuthJSON", "NativeAuthCrypto"]
        ),
        // Against real components: a private dbus-daemon with gnome-keyring-daemon, and the kernel's keyrings.
        .testTarget(
            name: "NativeAuthKeyringTests",
            dependencies: ["NativeAuthKeyring", "NativeAuthCache", "NativeAuthCore", "NativeAuthCrypto"]
        ),
        .testTarget(
            name: "NativeAuthCABITests",
            dependencies: [
                "NativeAuthCABI", "NativeAuthJSON", "NativeAuthCore", "CNativeAuthHeader", "NativeAuthTestSupport",
                "NativeAuthCrypto",
            ]
        ),
        // The library's flows through the C ABI, against the emulator executable in its own process.
        .testTarget(
            name: "NativeAuthFlowTests",
            dependencies: [
                "NativeAuthCABI", "NativeAuthJSON", "NativeAuthHTTP", "NativeAuthNet", "NativeAuthCrypto",
                "NativeAuthTestSupport",
            ]
        ),
        .testTarget(
            name: "NativeAuthEmulatorTests",
            dependencies: [
                "NativeAuthEmulator", "NativeAuthHTTP", "NativeAuthNet", "NativeAuthJSON", "NativeAuthCrypto",
            ]
        ),

        // libFuzzer targets for every document the library reads (Tests/Fuzz/README.md). A plain build replays the
        // committed corpora (`make test`); `make fuzz` builds it with -sanitize=fuzzer,address -DFUZZING.
        .systemLibrary(name: "CLibFuzzer", path: "Tests/Fuzz/CLibFuzzer"),
        .executableTarget(
            name: "nativeauth-fuzz",
            dependencies: [
                "NativeAuthCABI", "NativeAuthCore", "NativeAuthJSON", "NativeAuthHTTP", "NativeAuthNet",
                "NativeAuthCrypto", "NativeAuthKeyring", "NativeAuthTOML", "NativeAuthCache",
                "NativeAuthTestSupport", "CLibFuzzer",
            ],
            path: "Tests/Fuzz/Harness",
            // Only what a file imports: Foundation (linked for NativeAuthTestSupport) must not answer String calls.
            swiftSettings: [.enableUpcomingFeature("MemberImportVisibility")]
        ),
    ]
)
