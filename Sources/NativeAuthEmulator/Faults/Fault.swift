import NativeAuthJSON

/// An injected fault (`POST /_emulator/faults`) for the next `remaining` requests whose path ends with `pathSuffix`.
///
/// Stage `before` (default): a delay comes first; a drop, or an answer of the fault's own (`status`, `body`, `html`),
/// replaces the request, which the service never sees. Stage `after`: the service handles the request first (tokens
/// are issued, refresh tokens rotated), then the fault spoils the delivery of its answer. Either way, `retry_after`,
/// `content_type` and `body_bytes` reshape the answer, and `truncate`, `trickle_ms` and `reset_after_bytes` spoil how
/// its body travels.
struct Fault {
    enum Stage: String {
        case before, after
    }

    var pathSuffix: String
    var remaining: Int
    var stage: Stage
    var status: Int?
    /// Sent verbatim as `Retry-After` (seconds or an HTTP-date).
    var retryAfter: String?
    var delayMs: Int
    /// The answer's body: a JSON value, or text sent verbatim when it is a string.
    var body: JSONValue?
    /// An HTML error page, as a proxy or web application firewall would answer.
    var html: Bool
    /// Replaces the answer's Content-Type ("" removes it).
    var contentType: String?
    /// The answer padded (or cut) to exactly this many bytes; padded JSON stays valid JSON.
    var bodyBytes: Int?
    /// Promise the whole body, send half, then close the connection.
    var truncate: Bool
    /// Close the connection without answering.
    var drop: Bool
    /// Send the body `chunkBytes` at a time, `trickleMs` apart.
    var trickleMs: Int
    var chunkBytes: Int
    /// Send this many bytes of the body, then reset the connection (TCP RST).
    var resetAfterBytes: Int?
    /// Hold the answer (after the delay) until `POST /_emulator/faults/release` (see `HeldAnswers`).
    var hold: Bool
    /// Set when a request takes a hold fault: the releases counted then (`HeldAnswers.ticket`). A release that comes
    /// after the take lets this answer go even before its hold has begun.
    var holdTicket: Int? = nil

    static let members: Set<String> = [
        "path", "count", "stage", "status", "retry_after", "delay_ms", "body", "html", "content_type", "body_bytes",
        "truncate", "drop", "trickle_ms", "chunk_bytes", "reset_after_bytes", "hold",
    ]
    static let maxBodyBytes = 64 << 20

    init(_ doc: JSONValue) throws(JSONFieldError) {
        let f = try JSONFields(doc)
        try rejectUnknownMembers(f, Self.members)
        pathSuffix = try f.string("path")
        guard !pathSuffix.isEmpty else { throw JSONFieldError(path: "path", problem: .invalid("must not be empty")) }
        remaining = Int(try f.optionalInt("count", in: 1...100_000) ?? 1)
        switch try f.optionalString("stage") ?? "before" {
        case "before": stage = .before
        case "after": stage = .after
        default: throw JSONFieldError(path: "stage", problem: .invalid("must be \"before\" or \"after\""))
        }
        status = try f.optionalInt("status", in: 100...599).map(Int.init)
        switch f.value("retry_after") {
        case nil: retryAfter = nil
        case .int(let n)? where n >= 0: retryAfter = String(n)
        case .string(let s)? where !s.isEmpty && !s.contains(where: { $0.isNewline }): retryAfter = s
        default:
            throw JSONFieldError(path: "retry_after", problem: .invalid("must be seconds (≥ 0) or a one-line string"))
        }
        delayMs = Int(try f.optionalInt("delay_ms", in: 0...120_000) ?? 0)
        body = f.value("body")
        html = try f.optionalBool("html") ?? false
        contentType = try f.optionalString("content_type")
        if let ct = contentType, ct.contains(where: { $0.isNewline }) {
            throw JSONFieldError(path: "content_type", problem: .invalid("must be one line"))
        }
        bodyBytes = try f.optionalInt("body_bytes", in: 0...Int64(Self.maxBodyBytes)).map(Int.init)
        truncate = try f.optionalBool("truncate") ?? false
        drop = try f.optionalBool("drop") ?? false
        trickleMs = Int(try f.optionalInt("trickle_ms", in: 0...10_000) ?? 0)
        chunkBytes = Int(try f.optionalInt("chunk_bytes", in: 1...65_536) ?? 16)
        resetAfterBytes = try f.optionalInt("reset_after_bytes", in: 0...Int64(Self.maxBodyBytes)).map(Int.init)
        hold = try f.optionalBool("hold") ?? false
        if html && body != nil {
            throw JSONFieldError(path: "html", problem: .invalid("give either html or body, not both"))
        }
    }

    /// The fault answers with its own status/body instead of (before) or over (after) the service's answer.
    var replacesAnswer: Bool { status != nil || body != nil || html }

    /// The body travels in a spoiled way (needs the streaming adapter).
    var spoilsDelivery: Bool { truncate || trickleMs > 0 || resetAfterBytes != nil }

    /// What the fault did, for the request log: e.g. "status", "drop (after)", "delay+trickle".
    var kind: String {
        var parts: [String] = []
        if delayMs > 0 { parts.append("delay") }
        if hold { parts.append("hold") }
        if drop { parts.append("drop") }
        if status != nil { parts.append("status") }
        if body != nil { parts.append("body") }
        if html { parts.append("html") }
        if retryAfter != nil { parts.append("retry_after") }
        if contentType != nil { parts.append("content_type") }
        if bodyBytes != nil { parts.append("body_bytes") }
        if truncate { parts.append("truncate") }
        if trickleMs > 0 { parts.append("trickle") }
        if resetAfterBytes != nil { parts.append("reset") }
        let what = parts.isEmpty ? "none" : parts.joined(separator: "+")
        return stage == .after ? what + " (after)" : what
    }

    var json: JSONValue {
        var o: [String: JSONValue] = [
            "path": .string(pathSuffix), "remaining": .int(Int64(remaining)), "stage": .string(stage.rawValue),
            "delay_ms": .int(Int64(delayMs)), "truncate": .bool(truncate), "drop": .bool(drop), "html": .bool(html),
            "trickle_ms": .int(Int64(trickleMs)), "chunk_bytes": .int(Int64(chunkBytes)), "hold": .bool(hold),
        ]
        if let status { o["status"] = .int(Int64(status)) }
        if let retryAfter { o["retry_after"] = .string(retryAfter) }
        if let body { o["body"] = body }
        if let contentType { o["content_type"] = .string(contentType) }
        if let bodyBytes { o["body_bytes"] = .int(Int64(bodyBytes)) }
        if let resetAfterBytes { o["reset_after_bytes"] = .int(Int64(resetAfterBytes)) }
        return .object(o)
    }
}
