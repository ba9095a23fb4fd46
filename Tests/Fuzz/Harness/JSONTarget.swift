// Target "json": the JSON layer against jansson. Input: any bytes.
//  - JSONValue.parse and JSONDocument accept the same documents;
//  - JSONDocument's root converted to a JSONValue, and the same tree rebuilt through JSONNode's accessors, equal
//    JSONValue.parse's value;
//  - serialising twice gives the same bytes, which parse back to an equal value and serialise to themselves.
@testable import NativeAuthJSON

func fuzzJSON(_ data: UnsafeRawBufferPointer) {
    let document: JSONDocument
    do { document = try JSONDocument(bytes: data) } catch {
        if (try? JSONValue.parse(Array(data))) != nil { finding("JSONValue.parse accepted what JSONDocument refused") }
        return
    }
    let value: JSONValue
    do { value = try JSONValue.parse(Array(data)) } catch {
        finding("JSONValue.parse refused what JSONDocument accepted: \(error)")
    }
    guard document.root.value == value else { finding("JSONDocument's value differs from JSONValue.parse's") }
    guard rebuild(document.root) == value else { finding("JSONNode's accessors disagree with its value") }
    guard let once = value.serializedBytes(), let twice = value.serializedBytes() else {
        finding("a parsed value could not be serialised")
    }
    guard once == twice else {
        finding("serialising twice gave different bytes", String(decoding: once, as: UTF8.self))
    }
    let text = String(decoding: once, as: UTF8.self)
    guard let again = try? JSONValue.parse(once) else { finding("a serialised value does not parse", text) }
    guard again == value else { finding("a serialised value parses to another value", text) }
    guard again.serializedBytes() == once else { finding("the serialised form is not a fixed point", text) }
    guard value.serialized() == text else { finding("serialized() and serializedBytes() differ", text) }
}

/// `node` as a JSONValue built only through JSONNode's accessors (type name, scalars, elements, members, member).
private func rebuild(_ node: JSONNode) -> JSONValue {
    switch node.typeName {
    case "null":
        guard node.isNull else { finding("a null node is not isNull") }
        return .null
    case "boolean":
        guard let b = node.boolValue else { finding("a boolean node without boolValue") }
        return .bool(b)
    case "integer":
        guard let i = node.intValue, node.doubleValue == Double(i) else { finding("an integer node's values") }
        return .int(i)
    case "number":
        guard let d = node.doubleValue else { finding("a number node without doubleValue") }
        if let i = node.intValue, Double(i) != d { finding("a number node's intValue is not its value") }
        return .double(d)
    case "string":
        guard let s = node.stringValue else { finding("a string node without stringValue") }
        return .string(s)
    case "array":
        guard let items = node.elements else { finding("an array node without elements") }
        return .array(items.map(rebuild))
    case "object":
        guard node.isObject else { finding("an object node is not isObject") }
        var members: [String: JSONValue] = [:]
        for (key, child) in node.members {
            guard members[key] == nil else { finding("an object node lists a key twice") }
            guard let looked = node.member(key), looked.pointer == child.pointer else {
                finding("member(key) disagrees with members")
            }
            members[key] = rebuild(child)
        }
        return .object(members)
    default:
        finding("unknown type name \(node.typeName)")
    }
}
