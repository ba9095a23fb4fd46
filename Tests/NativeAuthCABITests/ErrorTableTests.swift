import CNativeAuthHeader
import Foundation
import NativeAuthCABI
import NativeAuthCore
import Testing

/// The error-code table in Swift (`NativeAuthError.Code.table`) is the source; the header, docs/errors.md, the
/// Python exception map and the Go sentinels must say the same, so none of them can drift.
@Suite struct ErrorTableTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// code → NA_* name, from the Swift table.
    static var expected: [String: String] {
        Dictionary(
            uniqueKeysWithValues: NativeAuthError.Code.table.map {
                ($0.code.rawValue, NAStatus($0.category).name.description)
            }
        )
    }

    static func matches(_ pattern: String, in text: String) throws -> [[String]] {
        let re = try NSRegularExpression(pattern: pattern)
        let ns = text as NSString
        return re.matches(in: text, range: NSRange(location: 0, length: ns.length)).map { m in
            (0..<m.numberOfRanges).map {
                m.range(at: $0).location == NSNotFound ? "" : ns.substring(with: m.range(at: $0))
            }
        }
    }

    @Test func theTableHasEachCodeOnceAndEveryStatusIsReachable() {
        let codes = NativeAuthError.Code.table.map(\.code)
        #expect(Set(codes).count == codes.count)
        let statuses = Set(NativeAuthError.Code.table.map { NAStatus($0.category) })
        #expect(statuses == Set(NAStatus.allCases.filter { $0 != .ok }))
    }

    @Test func theHeaderValuesAreTheSwiftValues() {
        #expect(NA_OK == NAStatus.ok.rawValue)
        #expect(NA_EINVAL == NAStatus.invalidArgument.rawValue)
        #expect(NA_EAUTH == NAStatus.auth.rawValue)
        #expect(NA_ENOTFOUND == NAStatus.notFound.rawValue)
        #expect(NA_EINTERACTION == NAStatus.interaction.rawValue)
        #expect(NA_ENETWORK == NAStatus.network.rawValue)
        #expect(NA_ESERVER == NAStatus.server.rawValue)
        #expect(NA_ESTATE == NAStatus.state.rawValue)
        #expect(NA_ENOMEM == NAStatus.noMemory.rawValue)
        #expect(NA_EINTERNAL == NAStatus.internal.rawValue)
        #expect(NA_ESTORAGE == NAStatus.storage.rawValue)
        #expect(NA__LAST == (NAStatus.allCases.map(\.rawValue).min() ?? 0) - 1)
        #expect(NA_LOG_VERBOSE == LogLevel.verbose.rawValue && NA_LOG_OFF == LogLevel.off.rawValue)
    }

    /// Each `NA_E*` entry of the header's status enum ends with "codes: a, b, c".
    @Test func theHeaderListsEachCodeUnderItsStatus() throws {
        let header = try Self.read("include/nativeauth.h")
        guard let start = header.range(of: "enum {\n    NA_OK"),
            let end = header.range(of: "};", range: start.upperBound..<header.endIndex)
        else { throw TestFailure("no status enum in the header") }
        let block = String(header[start.lowerBound..<end.lowerBound])
        var found: [String: String] = [:]
        let entries = try Self.matches(#"(NA_E[A-Z]+)\s*=\s*-?\d+,\s*/\*([\s\S]*?)\*/"#, in: block)
        for e in entries {
            guard let codes = e[2].range(of: "codes:") else { continue }
            for code in e[2][codes.upperBound...].split(whereSeparator: { ", \n".contains($0) }) where !code.isEmpty {
                found[String(code)] = e[1]
            }
        }
        #expect(found == Self.expected)
    }

    /// Every "Errors:" list of a call names only codes of the table and is complete (no "…").
    @Test func theHeaderPerCallListsAreCompleteAndKnown() throws {
        let header = try Self.read("include/nativeauth.h")
        let lists = try Self.matches(#"Errors[^:]*:([^.]*(?:\.[a-z_][^.]*)*)"#, in: header)
        #expect(!lists.isEmpty)
        for l in lists {
            #expect(!l[1].contains("…"), "an Errors: list ends in an ellipsis: \(l[1].prefix(80))")
            for word in try Self.matches(
                #"\b[a-z]+(?:_[a-z]+)+\b|\b(?:network|timeout|tls|server|internal)\b"#,
                in: l[1]
            ) {
                let w = word[0]
                if Self.expected[w] == nil && !["force_refresh", "redirect_reason", "password_too_weak"].contains(w)
                    && !w.hasPrefix("password_") && !w.hasPrefix("na_")
                {
                    Issue.record("the header's Errors: list names \(w), which is not an error code")
                }
            }
        }
    }

    @Test func docsErrorsMatchesTheTable() throws {
        let doc = try Self.read("docs/errors.md")
        var found: [String: String] = [:]
        for row in try Self.matches(#"(?m)^\| `([a-z_]+)` \| `(NA_[A-Z]+)` \|"#, in: doc) { found[row[1]] = row[2] }
        #expect(found == Self.expected)
    }

    /// Each code has a Python exception class whose family matches the code's status.
    @Test func thePythonExceptionMapMatchesTheTable() throws {
        let py = try Self.read("bindings/python/src/nativeauth/errors.py")
        var parent: [String: String] = [:]
        var code: [String: String] = [:]
        for m in try Self.matches(#"(?m)^class (\w+)\((\w+)[,)][\s\S]*?(?=^class |\z)"#, in: py) {
            parent[m[1]] = m[2]
            if let c = try Self.matches(#"\n    code = "([a-z_]+)""#, in: m[0]).first { code[m[1]] = c[1] }
        }
        let families: [String: String] = [
            "InvalidArgumentError": "NA_EINVAL", "AuthenticationError": "NA_EAUTH", "NoAccountError": "NA_ENOTFOUND",
            "InteractionRequiredError": "NA_EINTERACTION", "NetworkError": "NA_ENETWORK", "ServerError": "NA_ESERVER",
            "FlowError": "NA_ESTATE", "LibraryMemoryError": "NA_ENOMEM", "InternalError": "NA_EINTERNAL",
            "CacheError": "NA_ESTORAGE",
        ]
        func family(_ cls: String) -> String? {
            var c: String? = cls
            while let current = c {
                if let f = families[current] { return f }
                c = parent[current]
            }
            return nil
        }
        var found: [String: String] = [:]
        for (cls, c) in code where cls != "NativeAuthError" { found[c] = family(cls) ?? "?" }  // the base's default
        #expect(found == Self.expected)
    }

    /// The Go package has one sentinel per code (`ErrX = sentinel("code", StatusY)`, or `family(…)`), each with the
    /// code's status, and its `Status*` constants are the header's.
    @Test func theGoSentinelsMatchTheTable() throws {
        let go = try Self.read("bindings/go/errors.go")
        var status: [String: String] = [:]  // StatusAuth → NA_EAUTH
        for m in try Self.matches(#"(?m)^\s*(Status\w+)\s+Status = C\.(NA_\w+)"#, in: go) { status[m[1]] = m[2] }
        #expect(status.count == NAStatus.allCases.count)
        var found: [String: String] = [:]
        var names: [String: String] = [:]  // code → Go name
        for m in try Self.matches(#"(?m)^\s*(Err\w+)\s*=\s*(?:sentinel|family)\("([a-z_]+)", (Status\w+)\)"#, in: go) {
            #expect(found[m[2]] == nil, "two Go sentinels for \(m[2])")
            found[m[2]] = status[m[3]] ?? "?"
            names[m[2]] = m[1]
        }
        #expect(found == Self.expected)
        // docs/conventions.md: Err + the code in CamelCase, initialisms in capitals (ErrIDTokenInvalid, ErrTLS).
        let initialisms: Set<String> = ["id", "tls", "mfa", "url", "uri", "api", "http"]
        // Names spelled their own way: as the RFC spells them (RFC 9449's DPoP).
        let spelled: [String: String] = ["dpop": "DPoP"]
        for (code, name) in names {
            let camel = code.split(separator: "_").map { w in
                spelled[String(w)]
                    ?? (initialisms.contains(String(w)) ? w.uppercased() : w.prefix(1).uppercased() + w.dropFirst())
            }
            #expect(name == "Err" + camel.joined(), "the Go sentinel for \(code) is \(name)")
        }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
