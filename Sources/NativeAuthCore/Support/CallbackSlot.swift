internal import Glibc

/// A host callback the host may replace at any time from any thread (the log callback, the browser callback), with
/// the header's guarantee: once `replace` returned, the old callback is never called again (its `user_data` may be
/// freed).
///
/// An invocation takes the callback that is current when it starts and is counted while it runs; `replace` installs
/// the new callback at once and then waits only for the invocations of the old one that are still running. So an
/// invocation never waits for a `replace`. (A writer-preferring lock held by each invocation made one wait behind a
/// `replace` that was waiting for another invocation — and that one could be waiting for the first's call: a log
/// callback freeing the client waits for the client's other calls, whose next log line then waited for ever.)
///
/// A callback must not `replace` its own slot (it would wait for itself): the slot's owner refuses that first.
final class CallbackSlot<Value: Sendable>: @unchecked Sendable {  // `current` and the counts are guarded by `mutex`
    private final class Entry {
        let value: Value
        var running = 0
        init(_ value: Value) { self.value = value }
    }

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let ended: UnsafeMutablePointer<pthread_cond_t>
    private var current: Entry?

    init(_ value: Value? = nil) {
        mutex = .allocate(capacity: 1)
        ended = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(ended, nil)
        current = value.map(Entry.init)
    }

    deinit {
        pthread_cond_destroy(ended)
        pthread_mutex_destroy(mutex)
        ended.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the current callback (nil when there is none), counted as running until `body` returns.
    func invoke<R>(_ body: (Value?) -> R) -> R {
        pthread_mutex_lock(mutex)
        guard let entry = current else {
            pthread_mutex_unlock(mutex)
            return body(nil)
        }
        entry.running += 1
        pthread_mutex_unlock(mutex)
        defer {
            pthread_mutex_lock(mutex)
            entry.running -= 1
            if entry.running == 0 && entry !== current { pthread_cond_broadcast(ended) }
            pthread_mutex_unlock(mutex)
        }
        return body(entry.value)
    }

    /// Installs `value` (nil: none), running `also` under the slot's lock, and returns once no invocation of the
    /// callback it replaced is running any more.
    func replace(_ value: Value?, also: () -> Void = {}) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        let old = current
        current = value.map(Entry.init)
        also()
        while let old, old.running > 0 { pthread_cond_wait(ended, mutex) }
    }
}
