/// Errors from the crypto layer. Messages never contain key material or token contents.
public struct CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
