internal import NativeAuthCore
internal import NativeAuthJSON

extension MSALCacheFormat {
    /// Changes to a document: entries replaced in place, added or removed.
    struct Edit {
        var cache: MSALCacheFormat.Document
        let owner: EntryOwner
        /// Positions removed, by section.
        var removed: [String: Set<Int>] = [:]
        var added: [String: [CacheEntry]] = [:]

        init(cache: MSALCacheFormat.Document, owner: EntryOwner) {
            self.cache = cache
            self.owner = owner
        }

        static func id(_ section: String, _ at: Int) -> String { "\(section)\u{0}\(at)" }

        func entry(_ place: (section: String, at: Int)) -> CacheEntry? {
            guard let list = cache.sections[place.section], place.at < list.count else { return nil }
            return list[place.at]
        }

        mutating func remove(_ place: (section: String, at: Int)) {
            removed[place.section, default: []].insert(place.at)
        }

        /// Sets the entry `key` of `section` to `fields` laid over what it holds (unknown fields kept); `existing`
        /// is where an entry of that key is, if any.
        mutating func set(
            _ section: String,
            _ key: String,
            _ fields: [String: JSONValue],
            existing: (section: String, at: Int)?,
            dropping: [String] = []
        ) {
            var object = existing.flatMap { entry($0) }.map { cache.object($0) } ?? [:]
            for k in dropping { object[k] = nil }
            for (k, v) in fields { object[k] = v }
            let value = JSONValue.object(object).serializedBytes() ?? Array("{}".utf8)
            let new = CacheEntry(
                key: .bytes(Array(key.utf8)),
                rawKey: nil,
                value: .bytes(value),
                fields: EntryFields(object, owner: owner)
            )
            if let existing, var list = cache.sections[existing.section], existing.at < list.count {
                cache.sections[existing.section] = nil
                list[existing.at] = new
                cache.sections[existing.section] = list
                removed[existing.section]?.remove(existing.at)
            } else {
                added[section, default: []].append(new)
            }
        }

        func result() -> MSALCacheFormat.Document {
            var out = cache
            for (section, places) in removed {
                guard let list = cache.sections[section], !places.isEmpty else { continue }
                out.sections[section] = nil
                var kept: [CacheEntry] = []
                kept.reserveCapacity(list.count)
                for at in list.indices where !places.contains(at) { kept.append(list[at]) }
                out.sections[section] = kept
            }
            for (section, list) in added { out.sections[section, default: []].append(contentsOf: list) }
            return out
        }
    }
}
