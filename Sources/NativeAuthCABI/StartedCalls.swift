// Started calls (na_start): a blocking export run on a worker thread of the client's pool, its answer handed to the
// host's completion function — on the worker, or, once the host asked for the event fd, inside na_client_dispatch on
// the host's thread. The core knows nothing of this: a started call is the blocking call on another thread, with a
// CallCancellation made current there. One call is StartedCall (StartedCall.swift); a client's pool is here.
internal import CLinux
internal import Glibc
import NativeAuthCore
import Synchronization

/// A client's started calls: the queue, the worker pool (at most `maxWorkers` threads, started on demand, ending
/// after `idleSeconds` without work), and — in event-fd mode — the completions waiting for `na_client_dispatch`.
final class StartedCalls: @unchecked Sendable {  // all state is guarded by `mutex`
    static let idleSeconds = 10.0
    /// How long a worker that just finished looks for more work before it sleeps: a host that starts its next call as
    /// soon as done ran then finds a worker awake, instead of paying a futex wake-up.
    static let spinSeconds = 50e-6

    let maxWorkers: Int
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Workers wait on `work` for calls; `na_client_free` waits on `settled` for completions.
    private let work: UnsafeMutablePointer<pthread_cond_t>
    private let settled: UnsafeMutablePointer<pthread_cond_t>
    /// Calls queued plus early cancels waiting, mirrored for a spinning worker's lock-free look.
    private let waiting = Atomic<Int>(0)
    private var spinning = 0
    private var queue: [StartedCall] = []
    private var head = 0
    /// Calls whose done has not run yet (queued, running, waiting for delivery, or being delivered).
    private var pending: [ObjectIdentifier: StartedCall] = [:]
    /// Cancelled before a worker took them: delivered next, by any worker (or one started for them).
    private var cancelledEarly: [StartedCall] = []
    /// Finished calls whose done has not been taken for delivery: `completions[completionsHead...]`, in order.
    private var completions: [StartedCall] = []
    private var completionsHead = 0
    /// The serial of the last completion queued for dispatch.
    private var lastSerial: UInt64 = 0
    private var workers = 0
    private var idle = 0
    private var closing = false
    private var eventFD: Int32 = -1
    /// Threads inside a started call's export or done of this pool, and how deep (one per call on the thread's
    /// stack): a na_client_free from there does not wait for what its own thread is doing — and for nothing else.
    private var busyThreads: [UInt: Int] = [:]
    /// Threads that freed the client from inside a call or done of this pool (see `shutdown`).
    private var freedFrom: Set<UInt> = []
    /// Threads inside such a na_client_free now: in which order they entered it, and how many calls of this pool
    /// each was inside then (see `shutdown`).
    private var freeing: [UInt: (order: UInt64, own: Int)] = [:]
    private var freeings: UInt64 = 0

    init(workers: Int) {
        maxWorkers = max(1, workers)
        mutex = .allocate(capacity: 1)
        work = .allocate(capacity: 1)
        settled = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(work, nil)
        pthread_cond_init(settled, nil)
    }

    deinit {
        if eventFD >= 0 { Glibc.close(eventFD) }
        pthread_cond_destroy(work)
        pthread_cond_destroy(settled)
        pthread_mutex_destroy(mutex)
        work.deallocate()
        settled.deallocate()
        mutex.deallocate()
    }

    private func locked<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    private static var thisThread: UInt { UInt(pthread_self()) }

    // MARK: - Starting and cancelling

    /// `na_start` on this client: copies the request, registers the call's handle (before it can run), queues it.
    func start(
        export: @escaping BlockingExport,
        client: OpaquePointer,
        request: UnsafePointer<CChar>?,
        done: NADoneFunction,
        userData: UnsafeMutableRawPointer?,
        opOut: UnsafeMutablePointer<OpaquePointer?>?
    ) -> NAStatus {
        guard let copy = StartedCall.copy(request) else { return .noMemory }
        let call = StartedCall(
            export: export,
            client: client,
            pool: self,
            request: copy,
            done: done,
            userData: userData
        )
        var op: OpaquePointer? = nil
        if let opOut {
            guard let h = startedCalls.insert(call) else {
                call.dropRequest()
                return .noMemory
            }
            op = h
            opOut.pointee = h
        }
        switch enqueue(call) {
        case .ok: return .ok
        case let refused:
            startedCalls.remove(op)
            opOut?.pointee = nil
            call.dropRequest()
            return refused
        }
    }

    /// Queues `call`, starting a worker when none is idle and the pool is not full. `invalidArgument` (nothing
    /// queued) when the client is being freed, `noMemory` when no worker could be started at all.
    private func enqueue(_ call: StartedCall) -> NAStatus {
        var spawn = false
        let accepted = locked { () -> Bool in
            guard !closing else { return false }
            pending[ObjectIdentifier(call)] = call
            queue.append(call)
            waiting.add(1, ordering: .releasing)
            if idle > 0 {
                pthread_cond_signal(work)
            } else if spinning > 0 {
                // A worker that just finished is looking: it takes this call.
            } else if workers < maxWorkers {
                workers += 1
                spawn = true
            }
            return true
        }
        guard accepted else { return .invalidArgument }
        if spawn && !spawnWorker() {
            let stranded = locked { () -> Bool in
                workers -= 1
                guard workers == 0, let i = queue[head...].firstIndex(where: { $0 === call }) else { return false }
                queue.remove(at: i)
                waiting.subtract(1, ordering: .relaxed)
                pending.removeValue(forKey: ObjectIdentifier(call))
                return true
            }
            if stranded { return .noMemory }
        }
        return .ok
    }

    /// `na_op_cancel`: true when the call will end `cancelled`. A call still queued leaves the queue and is
    /// delivered next.
    func cancel(_ call: StartedCall) -> Bool {
        // Ended (its answer kept, or being delivered): too late, even when that answer is a cancel's.
        guard locked({ call.phase == .queued || call.phase == .running }), call.cancellation.cancel() else {
            return false
        }
        var spawn = false
        locked {
            guard call.phase == .queued, let i = queue[head...].firstIndex(where: { $0 === call }) else { return }
            queue.remove(at: i)
            waiting.subtract(1, ordering: .relaxed)
            call.dropRequest()
            call.setCancelled()
            call.phase = .finished
            if eventFD >= 0 {
                enqueueCompletion(call)
            } else {
                cancelledEarly.append(call)
                waiting.add(1, ordering: .releasing)
                if idle > 0 {
                    pthread_cond_signal(work)
                } else if spinning > 0 {
                    // A worker that just finished is looking.
                } else {
                    // Every worker is busy (perhaps waiting for a browser): one more thread delivers it now.
                    workers += 1
                    spawn = true
                }
            }
        }
        if spawn && !spawnWorker() { locked { workers -= 1 } }
        return true
    }

    // MARK: - Workers

    private func spawnWorker() -> Bool {
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        defer { pthread_attr_destroy(&attr) }
        pthread_attr_setdetachstate(&attr, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let me = Unmanaged.passRetained(self).toOpaque()
        let rc = pthread_create(
            &thread,
            &attr,
            { p in
                guard let p else { return nil }
                Unmanaged<StartedCalls>.fromOpaque(p).takeRetainedValue().runWorker()
                return nil
            },
            me
        )
        if rc != 0 { Unmanaged<StartedCalls>.fromOpaque(me).release() }
        return rc == 0
    }

    /// A worker: delivers early cancels, runs queued calls, and ends when idle too long or the client is freed.
    private func runWorker() {
        var justSpun = false
        pthread_mutex_lock(mutex)
        while true {
            if !cancelledEarly.isEmpty {
                let call = cancelledEarly.removeFirst()
                waiting.subtract(1, ordering: .relaxed)
                call.phase = .delivering
                busyThreads[Self.thisThread, default: 0] += 1
                pthread_mutex_unlock(mutex)
                call.deliver()
                pthread_mutex_lock(mutex)
                delivered(call)
                justSpun = false
                continue
            }
            if head < queue.count {
                let call = queue[head]
                head += 1
                waiting.subtract(1, ordering: .relaxed)
                if head > 64 && head * 2 > queue.count {
                    queue.removeFirst(head)
                    head = 0
                }
                call.phase = .running
                busyThreads[Self.thisThread, default: 0] += 1
                pthread_mutex_unlock(mutex)
                call.run()
                pthread_mutex_lock(mutex)
                call.phase = .finished
                // In event-fd mode the host runs done — unless the client is being freed from inside this very
                // call (a log or browser callback): then no dispatch will come, and the worker delivers it.
                if eventFD >= 0 && !freedFrom.contains(Self.thisThread) {
                    leaveBusy()
                    enqueueCompletion(call)
                } else {
                    call.phase = .delivering
                    pthread_mutex_unlock(mutex)
                    call.deliver()
                    pthread_mutex_lock(mutex)
                    delivered(call)
                }
                justSpun = false
                continue
            }
            if closing { break }
            if !justSpun && spinning == 0 {
                // One worker at a time looks for more work a little while before sleeping (see `spinSeconds`).
                spinning += 1
                pthread_mutex_unlock(mutex)
                let until = now() + Self.spinSeconds
                var checks = 0
                while waiting.load(ordering: .acquiring) == 0 {
                    checks &+= 1
                    if checks & 63 == 0 && now() > until { break }
                }
                pthread_mutex_lock(mutex)
                spinning -= 1
                justSpun = true
                continue
            }
            justSpun = false
            idle += 1
            let deadline = now() + Self.idleSeconds
            var ts = timespec(tv_sec: Int(deadline), tv_nsec: Int((deadline - Double(Int(deadline))) * 1e9))
            let rc = pthread_cond_timedwait(work, mutex, &ts)
            idle -= 1
            if rc == ETIMEDOUT && head >= queue.count && cancelledEarly.isEmpty { break }
        }
        workers -= 1
        pthread_cond_broadcast(settled)
        pthread_mutex_unlock(mutex)
    }

    private func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// With the mutex held: this thread is no longer inside a call or done of this pool (one level).
    private func leaveBusy() {
        let t = Self.thisThread
        let depth = (busyThreads[t] ?? 1) - 1
        if depth <= 0 { busyThreads.removeValue(forKey: t) } else { busyThreads[t] = depth }
    }

    /// With the mutex held: `call`'s done has run.
    private func delivered(_ call: StartedCall) {
        call.phase = .delivered
        pending.removeValue(forKey: ObjectIdentifier(call))
        leaveBusy()
        if closing { pthread_cond_broadcast(settled) }
    }

    // MARK: - The event fd

    /// With the mutex held: queues a finished call for `na_client_dispatch` and makes the fd readable.
    private func enqueueCompletion(_ call: StartedCall) {
        lastSerial += 1
        call.serial = lastSerial
        completions.append(call)
        var one: UInt64 = 1
        _ = write(eventFD, &one, 8)
        if closing { pthread_cond_broadcast(settled) }  // a na_client_free waiting delivers it
    }

    /// `na_client_event_fd`: the fd (made on first use), switching the pool to event-fd mode; nil when the system
    /// refused an eventfd.
    func eventDescriptor() -> Int32? {
        locked { () -> Int32? in
            if eventFD < 0 {
                let fd = nashim_eventfd()
                guard fd >= 0 else { return nil }
                eventFD = fd
            }
            return eventFD
        }
    }

    /// `na_client_dispatch`: runs the completions waiting now on this thread, one at a time; returns how many ran.
    ///
    /// One at a time: this thread counts as inside only the done that is running, so a `na_client_free` from inside
    /// it runs every other done (those this dispatch had not reached yet included) before it returns, and a
    /// `na_client_dispatch` from inside it runs those waiting then. Completions queued after this call began (also
    /// those of calls a done started) are left for the next dispatch: the fd is readable for them.
    func dispatch() -> Int {
        let last = locked { () -> UInt64? in
            guard eventFD >= 0 else { return nil }
            var counter: UInt64 = 0
            _ = read(eventFD, &counter, 8)  // cleared first: a completion queued from now on sets it again
            return lastSerial
        }
        guard let last else { return 0 }
        var ran = 0
        while let call = locked({ takeCompletion(upTo: last) }) {
            call.deliver()
            locked { delivered(call) }
            ran += 1
        }
        return ran
    }

    /// With the mutex held: the first completion waiting (when it was queued no later than `last`), marked as being
    /// delivered on this thread.
    private func takeCompletion(upTo last: UInt64 = .max) -> StartedCall? {
        guard completionsHead < completions.count, completions[completionsHead].serial <= last else { return nil }
        let call = completions[completionsHead]
        completionsHead += 1
        if completionsHead == completions.count {
            completions.removeAll(keepingCapacity: true)
            completionsHead = 0
        } else if completionsHead > 64 && completionsHead * 2 > completions.count {
            completions.removeFirst(completionsHead)
            completionsHead = 0
        }
        call.phase = .delivering
        busyThreads[Self.thisThread, default: 0] += 1
        return call
    }

    // MARK: - Closing

    /// `na_client_free`: refuses new calls, cancels every pending one, and returns once every done has run (those
    /// of calls that had not started, and in event-fd mode all of them, on this thread) — except what this thread is
    /// itself inside (a done, or a callback of a running call, that freed the client), and what threads that were
    /// already inside such a na_client_free when this one began are inside.
    ///
    /// Two threads each inside a call or done of this pool that free the client at once cannot both wait for the
    /// other: neither's call can end before its na_client_free returned. So the later one does not wait for what
    /// the earlier one is inside, and returns first; the earlier one then waits for the later one's calls as for any
    /// other, and returns once they ended. (Waits go only from earlier to later, so none closes a circle.)
    func shutdown() {
        let pendingNow = locked { () -> [StartedCall] in
            closing = true
            pthread_cond_broadcast(work)
            return Array(pending.values)
        }
        for call in pendingNow { _ = call.cancellation.cancel() }
        pthread_mutex_lock(mutex)
        // Calls no worker took: cancelled here, delivered below like completions.
        while head < queue.count {
            let call = queue[head]
            head += 1
            call.dropRequest()
            call.setCancelled()
            call.phase = .finished
            completions.append(call)
        }
        queue.removeAll()
        head = 0
        completions.append(contentsOf: cancelledEarly)
        cancelledEarly.removeAll()
        waiting.store(0, ordering: .relaxed)
        let me = Self.thisThread
        let own = busyThreads[me] ?? 0
        let outer = freeing[me]
        var order: UInt64 = 0  // a free from outside every call waits for all of them
        if own > 0 {
            freedFrom.insert(me)
            freeings += 1
            order = freeings
            freeing[me] = (order, own)
        }
        // One at a time, as in `dispatch`: a done that frees the client again (a nested free) finds only itself
        // counted as this thread's, so it too returns only once every other done has run.
        while pending.count > own + insideEarlierFrees(than: order, except: me) {
            if let call = takeCompletion() {
                pthread_mutex_unlock(mutex)
                call.deliver()
                pthread_mutex_lock(mutex)
                delivered(call)
                continue
            }
            pthread_cond_wait(settled, mutex)
        }
        if own > 0 { freeing[me] = outer }
        if eventFD >= 0 && pending.isEmpty {
            Glibc.close(eventFD)
            eventFD = -1
        }
        pthread_mutex_unlock(mutex)
    }

    /// With the mutex held: how many calls the threads that entered a na_client_free from inside a call or done of
    /// this pool before `order` (and are still in it) are inside — other than the thread `me`.
    private func insideEarlierFrees(than order: UInt64, except me: UInt) -> Int {
        var n = 0
        for (thread, entry) in freeing where thread != me && entry.order < order { n += entry.own }
        return n
    }
}
