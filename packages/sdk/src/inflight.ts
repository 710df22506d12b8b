/**
 * The handler work in flight (event handlers, tool calls, every host → child request), so shutdown
 * can wait for it — within a bound. Upstream waits forever, which lets one hung handler hold the
 * shutdown ack hostage until the host's SIGKILL; here the wait ends at the bound, the stragglers
 * are abandoned (their requests answered with an error, their signals aborted) and named in the log.
 */
import { isThenable } from "@nexo/wire";

/** What a running handler can observe of its own lifecycle. */
export interface TaskHandle {
  /** Aborted when the host goes away or shutdown abandons the task. */
  readonly signal: AbortSignal;
}

/**
 * One tracked task, also the handle its work sees. A class, so that the per-call cost is one object
 * (the signal getter lives on the prototype); the AbortController is created only if the work reads
 * its signal, and the label only when someone asks for it (logs, shutdown): both were measurable
 * costs on the tool.invoke hot path (docs/performance.md).
 */
class Task implements TaskHandle {
  settle: ((error: Error) => void) | undefined = undefined;
  controller: AbortController | undefined = undefined;
  abortedWith: Error | undefined = undefined;
  // Its place in InflightTasks' list; `tracked` until it is removed.
  prev: Task | undefined = undefined;
  next: Task | undefined = undefined;
  tracked = false;

  constructor(private readonly name: string | (() => string)) {}

  get label(): string {
    return typeof this.name === "string" ? this.name : this.name();
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.abortedWith !== undefined) this.controller.abort(this.abortedWith);
    }
    return this.controller.signal;
  }
}

/**
 * The tasks are a doubly linked list threaded through the tasks themselves, oldest first. A Set did
 * the same job, but adding a fresh object to a Set gives it an identity hash (a property store
 * allocated per task): ~0.25 µs of each tool call's ~25 µs in the child, against ~0.01 µs for two
 * links (docs/performance.md, plugin tool.invoke).
 */
export class InflightTasks {
  private head: Task | undefined = undefined;
  private tail: Task | undefined = undefined;
  private count = 0;
  private idleWaiters: Array<() => void> = [];

  get size(): number {
    return this.count;
  }

  labels(): string[] {
    return this.list().map((task) => task.label);
  }

  /** The tracked tasks, oldest first, as an array (safe to remove from while walking it). */
  private list(): Task[] {
    const tasks: Task[] = [];
    for (let task = this.head; task !== undefined; task = task.next) tasks.push(task);
    return tasks;
  }

  private add(task: Task): void {
    task.tracked = true;
    task.prev = this.tail;
    if (this.tail === undefined) this.head = task;
    else this.tail.next = task;
    this.tail = task;
    this.count++;
  }

  /**
   * Runs `work` as a tracked task. The returned promise settles with the work, or rejects with the
   * abandonment error if the task is abandoned first. `label` names the task in logs; a function
   * is called only when the name is needed.
   */
  run<T>(label: string | (() => string), work: (handle: TaskHandle) => T | Promise<T>): Promise<T> {
    const task = new Task(label);
    this.add(task);
    return new Promise<T>((resolve, reject) => {
      task.settle = reject;
      let outcome: T | Promise<T>;
      try {
        outcome = work(task);
      } catch (error) {
        this.remove(task);
        reject(error);
        return;
      }
      if (!isThenable(outcome)) {
        this.remove(task);
        resolve(outcome);
        return;
      }
      this.follow(task, outcome, resolve, reject);
    });
  }

  /**
   * Like `run`, but a `work` that finishes synchronously gives its value (or throws its error)
   * synchronously: no promise is built. The request path uses it so that a synchronous handler's
   * reply is written in the same callback that read the request, with no microtask hop between
   * (docs/performance.md, plugin tool.invoke). Work that returns a promise is tracked as by `run`.
   */
  call<T>(label: string | (() => string), work: (handle: TaskHandle) => T | Promise<T>): T | Promise<T> {
    const task = new Task(label);
    this.add(task);
    let outcome: T | Promise<T>;
    try {
      outcome = work(task);
    } catch (error) {
      this.remove(task);
      throw error;
    }
    if (!isThenable(outcome)) {
      this.remove(task);
      return outcome;
    }
    return this.track(task, outcome);
  }

  private track<T>(task: Task, outcome: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      task.settle = reject;
      this.follow(task, outcome, resolve, reject);
    });
  }

  /** Settles a task's promise with its work's, the task untracked first. */
  private follow<T>(
    task: Task,
    outcome: Promise<T>,
    resolve: (value: T) => void,
    reject: (error: unknown) => void,
  ): void {
    outcome.then(
      (value) => {
        this.remove(task);
        resolve(value);
      },
      (error: unknown) => {
        this.remove(task);
        reject(error);
      },
    );
  }

  /** Aborts every task's signal (the host is gone) but keeps waiting for them. */
  abortAll(reason: Error): void {
    for (let task = this.head; task !== undefined; task = task.next) abortTask(task, reason);
  }

  /**
   * Waits until no task is left or `timeoutMs` has passed. Returns the labels of the tasks still
   * running at the deadline (empty when everything finished).
   */
  async drain(timeoutMs: number): Promise<string[]> {
    if (this.count === 0) return [];
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([idle, deadline]);
    clearTimeout(timer);
    return this.labels();
  }

  /**
   * Gives up on every remaining task: its signal is aborted and its promise rejects with `error`
   * (so a request gets an error reply). Whatever the work does later is ignored.
   */
  abandon(error: Error): string[] {
    const tasks = this.list();
    const labels = tasks.map((task) => task.label);
    for (const task of tasks) {
      abortTask(task, error);
      this.remove(task);
      task.settle?.(error);
    }
    return labels;
  }

  private remove(task: Task): void {
    if (!task.tracked) return;
    task.tracked = false;
    if (task.prev === undefined) this.head = task.next;
    else task.prev.next = task.next;
    if (task.next === undefined) this.tail = task.prev;
    else task.next.prev = task.prev;
    task.prev = undefined;
    task.next = undefined;
    this.count--;
    // Checked first: at one call in flight every call empties the list, and splice builds an array.
    if (this.count === 0 && this.idleWaiters.length > 0)
      for (const wake of this.idleWaiters.splice(0)) wake();
  }
}

function abortTask(task: Task, reason: Error): void {
  if (task.abortedWith !== undefined) return;
  task.abortedWith = reason;
  task.controller?.abort(reason);
}
