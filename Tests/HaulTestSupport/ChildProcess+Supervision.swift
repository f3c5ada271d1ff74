#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ChildProcess {
    /// A task whose value is the child's wait status, once it has exited.
    public func terminationTask() -> Task<Int32, Never> {
        let exit = self.exit
        return Task {
            var status: Int32 = 0
            for await value in exit { status = value }
            return status
        }
    }

    /// Kills the child with SIGKILL if it has not exited within `timeout`, so that a stuck
    /// child fails its test instead of hanging the suite. The task's value says whether it had to.
    public func watchdog(_ termination: Task<Int32, Never>, timeout: Duration) -> Task<Bool, Never> {
        Task {
            let finished = await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    _ = await termination.value
                    return true
                }
                group.addTask {
                    try? await Task.sleep(for: timeout)
                    return false
                }
                let first = await group.next() ?? true
                group.cancelAll()
                return first
            }
            if !finished { self.send(SIGKILL) }
            return !finished
        }
    }
}
