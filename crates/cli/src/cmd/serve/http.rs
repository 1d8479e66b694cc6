//! The HTTP/1.1 server under `vernier serve`, made so that no client can exhaust it.
//!
//! One thread owns every connection: it waits for readiness events (mio, epoll on Linux),
//! accepts, reads request heads, writes answers and closes, all without blocking, so that an
//! idle or slow connection holds a file descriptor and a few bytes, never a thread. A small
//! pool of threads, started once, makes the answers. Every bound is in [`Limits`]:
//!
//! - the whole request head must arrive within `request_deadline` of the connection's accept,
//!   however the client paces it (a per-read timeout would let a client that sends a header
//!   line every few seconds hold a connection for as long as it likes); then the answer is 408;
//! - at most `connections` connections are open; one beyond is answered 503 and closed;
//! - at most `answering` requests are being answered (queued for a worker, made, or written);
//!   one beyond is answered 503, so the answers held in memory are bounded too;
//! - an answer must be written within `answer_deadline`, else the connection is closed;
//! - the head is at most [`MAX_HEAD_BYTES`], else 431.
//!
//! Each connection gets one answer with `Connection: close` (RFC 9112, 9.6): a browser opens
//! several connections at once and keeps idle ones open, which costs nothing here. After the
//! answer the server shuts down its sending side and reads what the client still sends until it
//! closes (for at most `linger`), as RFC 9112 9.6 advises: closing with unread data would make
//! the kernel reset the connection, and the client could lose the answer.
//!
//! The thread count never depends on the clients: the workers are started before the first
//! accept, and a worker that cannot be started leaves fewer (none is an error).

use std::collections::{BTreeSet, HashMap};
use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};

/// The largest request head read; the site's requests are a line and a few headers.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

const LISTENER: Token = Token(usize::MAX);
const WAKER: Token = Token(usize::MAX - 1);

/// How long accepting pauses when the process has no file descriptor left (EMFILE, ENFILE): the
/// pending connections wait in the kernel's queue until a connection closes or this passes.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// The bounds of the server (module documentation).
#[derive(Debug, Clone)]
pub struct Limits {
    /// Open connections at most; one beyond is answered 503 and closed.
    pub connections: usize,
    /// Requests being answered at most (queued for a worker, made, or written); one beyond is
    /// answered 503.
    pub answering: usize,
    /// From accept to the end of the request head; then 408.
    pub request_deadline: Duration,
    /// From the answer being ready to its last byte written; then the connection is closed.
    pub answer_deadline: Duration,
    /// How long the server reads what a client still sends after its answer before closing.
    pub linger: Duration,
    /// The threads that make answers.
    pub workers: usize,
}

/// A request as the handler sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    /// The request target as sent (`/bench/0-pipe.html?x=1`).
    pub target: String,
    /// The Host header's value (`127.0.0.1:8080`), when the request has one.
    pub host: Option<String>,
    /// The address of this machine that the connection came in on.
    pub local: SocketAddr,
}

/// An answer: status, content type and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn text(status: u16, body: &str) -> Self {
        Answer {
            status,
            content_type: "text/plain; charset=utf-8",
            body: body.as_bytes().to_vec(),
        }
    }

    /// The bytes on the wire: status line, headers and, unless `head_only` (HEAD), the body.
    fn encode(&self, head_only: bool) -> Vec<u8> {
        let reason = match self.status {
            200 => "OK",
            400 => "Bad Request",
            404 => "Not Found",
            405 => "Method Not Allowed",
            408 => "Request Timeout",
            421 => "Misdirected Request",
            431 => "Request Header Fields Too Large",
            503 => "Service Unavailable",
            _ => "Internal Server Error",
        };
        let mut head = format!(
            "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\n\
             Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n",
            self.status,
            self.content_type,
            self.body.len()
        );
        match self.status {
            405 => head.push_str("Allow: GET, HEAD\r\n"),
            // RFC 9110, 15.6.4: when to try again.
            503 => head.push_str("Retry-After: 1\r\n"),
            _ => {}
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        if !head_only {
            bytes.extend_from_slice(&self.body);
        }
        bytes
    }
}

/// What makes the answer to a request; called by the workers, several at once.
pub type Handler<'a> = dyn Fn(&Request) -> Answer + Sync + 'a;

/// Ends [`Server::run`] from another thread (tests; `vernier serve` runs until a signal).
#[cfg(test)]
#[derive(Clone)]
pub struct Stopper {
    stop: Arc<AtomicBool>,
    waker: Arc<Waker>,
}

#[cfg(test)]
impl Stopper {
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.waker.wake();
    }
}

/// A listening socket with its event loop, ready to [`Server::run`].
pub struct Server {
    poll: Poll,
    listener: TcpListener,
    waker: Arc<Waker>,
    stop: Arc<AtomicBool>,
    limits: Limits,
}

impl Server {
    /// Takes over `listener` (bound and listening).
    pub fn new(listener: std::net::TcpListener, limits: Limits) -> io::Result<Server> {
        listener.set_nonblocking(true)?;
        let mut listener = TcpListener::from_std(listener);
        let poll = Poll::new()?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        Ok(Server {
            poll,
            listener,
            waker,
            stop: Arc::new(AtomicBool::new(false)),
            limits,
        })
    }

    #[cfg(test)]
    pub fn stopper(&self) -> Stopper {
        Stopper {
            stop: Arc::clone(&self.stop),
            waker: Arc::clone(&self.waker),
        }
    }

    /// Serves until stopped. Fails only when no worker can be started or waiting for events
    /// fails; a connection's errors concern that connection alone.
    pub fn run(mut self, handler: &Handler<'_>) -> io::Result<()> {
        let (jobs, queue) = mpsc::sync_channel::<Job>(self.limits.answering.max(1));
        let (done, answers) = mpsc::channel::<(usize, Vec<u8>)>();
        let queue = Mutex::new(queue);
        std::thread::scope(|scope| {
            let mut started = 0;
            let mut failure = None;
            for i in 0..self.limits.workers.max(1) {
                let (queue, done, waker) = (&queue, done.clone(), Arc::clone(&self.waker));
                let spawned = std::thread::Builder::new()
                    .name(format!("serve-{i}"))
                    .spawn_scoped(scope, move || work(queue, handler, &done, &waker));
                match spawned {
                    Ok(_) => started += 1,
                    Err(e) => failure = Some(e),
                }
            }
            drop(done);
            if started == 0 {
                let e = failure.unwrap_or_else(|| io::Error::other("no worker"));
                return Err(io::Error::new(
                    e.kind(),
                    format!("cannot start a thread to answer requests: {e}"),
                ));
            }
            let result = self.event_loop(&jobs, &answers);
            // The workers end when the queue is closed.
            drop(jobs);
            result
        })
    }

    fn event_loop(
        &mut self,
        jobs: &SyncSender<Job>,
        answers: &Receiver<(usize, Vec<u8>)>,
    ) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        let mut conns = Connections {
            map: HashMap::new(),
            deadlines: BTreeSet::new(),
            answering: 0,
            next_id: 0,
            registry: self.poll.registry().try_clone()?,
            limits: self.limits.clone(),
            jobs: jobs.clone(),
        };
        let mut accept_paused_until: Option<Instant> = None;
        while !self.stop.load(Ordering::SeqCst) {
            let mut wake_at = conns.next_deadline();
            if let Some(t) = accept_paused_until {
                wake_at = Some(wake_at.map_or(t, |w| w.min(t)));
            }
            let timeout = wake_at.map(|t| t.saturating_duration_since(Instant::now()));
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            let mut accept = false;
            for event in events.iter() {
                match event.token() {
                    LISTENER => accept = true,
                    WAKER => {}
                    Token(id) => conns.ready(id),
                }
            }
            for (id, bytes) in answers.try_iter() {
                conns.answered(id, bytes);
            }
            let now = Instant::now();
            if accept_paused_until.is_some_and(|t| t <= now) {
                accept_paused_until = None;
                accept = true;
            }
            if accept && accept_paused_until.is_none() {
                accept_paused_until = self.accept(&mut conns);
            }
            conns.expire(Instant::now());
        }
        Ok(())
    }

    /// Accepts every pending connection. Returns when to try again when the process is out of
    /// file descriptors.
    fn accept(&self, conns: &mut Connections) -> Option<Instant> {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    if conns.map.len() >= self.limits.connections {
                        refuse(stream);
                    } else {
                        conns.open(stream);
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return None,
                Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) => {
                    return Some(Instant::now() + ACCEPT_PAUSE)
                }
                // A connection that failed before it was accepted (ECONNABORTED) concerns only
                // its client.
                Err(_) => {}
            }
        }
    }
}

/// A request for a worker, for connection `id`.
struct Job {
    id: usize,
    request: Request,
}

/// A worker: answers requests from the queue until it is closed. A handler that panics gets
/// its request a 500, and the worker goes on.
fn work(
    queue: &Mutex<Receiver<Job>>,
    handler: &Handler<'_>,
    done: &mpsc::Sender<(usize, Vec<u8>)>,
    waker: &Waker,
) {
    loop {
        let job = {
            let queue = match queue.lock() {
                Ok(queue) => queue,
                Err(poisoned) => poisoned.into_inner(),
            };
            queue.recv()
        };
        let Ok(job) = job else { return };
        let answer = catch_unwind(AssertUnwindSafe(|| handler(&job.request)))
            .unwrap_or_else(|_| Answer::text(500, "the page could not be made (a bug)\n"));
        let bytes = answer.encode(job.request.method == "HEAD");
        if done.send((job.id, bytes)).is_err() {
            return;
        }
        let _ = waker.wake();
    }
}

/// Answers a connection beyond the limit with 503, as far as one write without waiting takes
/// it (a new connection's send buffer holds the few bytes), and closes it.
fn refuse(mut stream: TcpStream) {
    let bytes = Answer::text(503, "too many connections; try again\n").encode(false);
    let _ = stream.write(&bytes);
    let _ = stream.shutdown(Shutdown::Write);
}

/// Where a connection is.
enum State {
    /// Reading the request head.
    Reading { head: Vec<u8> },
    /// With a worker.
    Answering,
    /// Writing an answer; `made` when a worker made it (it counts toward
    /// [`Limits::answering`]), not when it is the server's own short refusal.
    Writing {
        bytes: Vec<u8>,
        written: usize,
        made: bool,
    },
    /// Answered, its sending side shut down; reading what the client still sends until it
    /// closes.
    Closing,
}

impl State {
    /// Whether the state counts toward [`Limits::answering`].
    fn answering(&self) -> bool {
        matches!(self, State::Answering | State::Writing { made: true, .. })
    }
}

struct Connection {
    stream: TcpStream,
    state: State,
    /// When the current state ends (none while a worker answers).
    deadline: Option<Instant>,
}

/// What a connection does next, decided while it is borrowed.
enum Next {
    Wait,
    Close,
    Answer(Answer, bool),
    Request(Request),
}

/// The open connections by id, their deadlines in order, and what they need of the server.
struct Connections {
    map: HashMap<usize, Connection>,
    deadlines: BTreeSet<(Instant, usize)>,
    /// Connections whose state counts toward [`Limits::answering`].
    answering: usize,
    next_id: usize,
    registry: mio::Registry,
    limits: Limits,
    jobs: SyncSender<Job>,
}

impl Connections {
    fn next_deadline(&self) -> Option<Instant> {
        self.deadlines.first().map(|(t, _)| *t)
    }

    fn open(&mut self, mut stream: TcpStream) {
        let id = self.next_id;
        // Below the listener's and the waker's tokens; 2^64 connections never come.
        self.next_id += 1;
        if self
            .registry
            .register(&mut stream, Token(id), Interest::READABLE)
            .is_err()
        {
            return;
        }
        self.map.insert(
            id,
            Connection {
                stream,
                state: State::Reading {
                    head: Vec::with_capacity(1024),
                },
                deadline: None,
            },
        );
        self.set_deadline(id, Some(Instant::now() + self.limits.request_deadline));
        // The request may have arrived with the connection, and edge-triggered readiness
        // would not say so again.
        self.read(id);
    }

    fn close(&mut self, id: usize) {
        if let Some(mut c) = self.map.remove(&id) {
            if let Some(t) = c.deadline {
                self.deadlines.remove(&(t, id));
            }
            if c.state.answering() {
                self.answering -= 1;
            }
            let _ = self.registry.deregister(&mut c.stream);
        }
    }

    /// Moves connection `id` to `state`, keeping the count of those answering.
    fn set_state(&mut self, id: usize, state: State) {
        if let Some(c) = self.map.get_mut(&id) {
            if c.state.answering() {
                self.answering -= 1;
            }
            if state.answering() {
                self.answering += 1;
            }
            c.state = state;
        }
    }

    fn set_deadline(&mut self, id: usize, deadline: Option<Instant>) {
        let Some(c) = self.map.get_mut(&id) else {
            return;
        };
        if let Some(t) = c.deadline.take() {
            self.deadlines.remove(&(t, id));
        }
        if let Some(t) = deadline {
            self.deadlines.insert((t, id));
        }
        c.deadline = deadline;
    }

    /// A readiness event of connection `id`.
    fn ready(&mut self, id: usize) {
        match self.map.get(&id).map(|c| &c.state) {
            Some(State::Reading { .. }) => self.read(id),
            Some(State::Writing { .. }) => self.write(id),
            Some(State::Closing) => self.drain(id),
            // Nothing more is read until the answer is written.
            Some(State::Answering) | None => {}
        }
    }

    /// Reads what has arrived of the request head; a complete head goes to a worker.
    fn read(&mut self, id: usize) {
        match self.read_head(id) {
            Next::Wait => {}
            Next::Close => self.close(id),
            Next::Answer(answer, head_only) => self.answer(id, answer.encode(head_only), false),
            Next::Request(request) => self.dispatch(id, request),
        }
    }

    fn read_head(&mut self, id: usize) -> Next {
        let Some(c) = self.map.get_mut(&id) else {
            return Next::Wait;
        };
        let State::Reading { head } = &mut c.state else {
            return Next::Wait;
        };
        let mut buf = [0u8; 4096];
        let end = loop {
            if let Some(end) = head_end(head) {
                break end;
            }
            if head.len() >= MAX_HEAD_BYTES {
                return Next::Answer(Answer::text(431, "request head too large\n"), false);
            }
            let room = (MAX_HEAD_BYTES - head.len()).min(buf.len());
            match c.stream.read(&mut buf[..room]) {
                // The client went away before its request was complete.
                Ok(0) => return Next::Close,
                Ok(n) => head.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Next::Wait,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Next::Close,
            }
        };
        let parsed = match parse(&head[..end]) {
            Ok(parsed) => parsed,
            Err(answer) => return Next::Answer(answer, false),
        };
        let Ok(local) = c.stream.local_addr() else {
            return Next::Close;
        };
        Next::Request(Request {
            method: parsed.method,
            target: parsed.target,
            host: parsed.host,
            local,
        })
    }

    /// Hands a request to the workers, or answers 503 when [`Limits::answering`] are being
    /// answered already.
    fn dispatch(&mut self, id: usize, request: Request) {
        let head_only = request.method == "HEAD";
        if self.answering < self.limits.answering {
            match self.jobs.try_send(Job { id, request }) {
                Ok(()) => {
                    self.set_state(id, State::Answering);
                    self.set_deadline(id, None);
                    return;
                }
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {}
            }
        }
        let busy = Answer::text(503, "too many requests at once; try again\n");
        self.answer(id, busy.encode(head_only), false);
    }

    /// A worker's answer to connection `id`.
    fn answered(&mut self, id: usize, bytes: Vec<u8>) {
        if matches!(self.map.get(&id).map(|c| &c.state), Some(State::Answering)) {
            self.answer(id, bytes, true);
        }
    }

    /// Starts writing `bytes` to connection `id`; `made` by a worker (see [`State::Writing`]).
    fn answer(&mut self, id: usize, bytes: Vec<u8>, made: bool) {
        self.set_state(
            id,
            State::Writing {
                bytes,
                written: 0,
                made,
            },
        );
        let Some(c) = self.map.get_mut(&id) else {
            return;
        };
        if self
            .registry
            .reregister(&mut c.stream, Token(id), Interest::WRITABLE)
            .is_err()
        {
            return self.close(id);
        }
        self.set_deadline(id, Some(Instant::now() + self.limits.answer_deadline));
        self.write(id);
    }

    fn write(&mut self, id: usize) {
        let Some(c) = self.map.get_mut(&id) else {
            return;
        };
        let State::Writing { bytes, written, .. } = &mut c.state else {
            return;
        };
        while *written < bytes.len() {
            match c.stream.write(&bytes[*written..]) {
                Ok(0) => return self.close(id),
                Ok(n) => *written += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return self.close(id),
            }
        }
        // Written: the sending side ends, and what the client still sends is read until it
        // closes (module documentation).
        let shut = c.stream.shutdown(Shutdown::Write).is_ok()
            && self
                .registry
                .reregister(&mut c.stream, Token(id), Interest::READABLE)
                .is_ok();
        if !shut {
            return self.close(id);
        }
        self.set_state(id, State::Closing);
        self.set_deadline(id, Some(Instant::now() + self.limits.linger));
        self.drain(id);
    }

    /// Reads and drops what a closing connection's client sends; closes at its end.
    fn drain(&mut self, id: usize) {
        let Some(c) = self.map.get_mut(&id) else {
            return;
        };
        let mut buf = [0u8; 4096];
        loop {
            match c.stream.read(&mut buf) {
                Ok(0) => return self.close(id),
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return self.close(id),
            }
        }
    }

    /// Ends every state whose deadline has passed: a request not complete is answered 408, an
    /// answer not written or a closing connection not closed by its client is closed.
    fn expire(&mut self, now: Instant) {
        while let Some(&(t, id)) = self.deadlines.first() {
            if t > now {
                break;
            }
            self.set_deadline(id, None);
            match self.map.get(&id).map(|c| &c.state) {
                Some(State::Reading { .. }) => {
                    let late = Answer::text(408, "the request did not arrive in time\n");
                    self.answer(id, late.encode(false), false);
                }
                Some(_) => self.close(id),
                None => {}
            }
        }
    }
}

/// The length of the request head in `bytes` (through the empty line that ends it), once it
/// is all there.
fn head_end(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4)
}

/// What a request head says that the server needs.
#[derive(Debug, PartialEq, Eq)]
struct Parsed {
    method: String,
    target: String,
    host: Option<String>,
}

/// Parses a complete request head, or gives the answer to a malformed one: 400 also for an
/// HTTP/1.1 request without exactly one Host header (RFC 9112, 3.2).
fn parse(head: &[u8]) -> Result<Parsed, Answer> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err(Answer::text(400, "incomplete request\n")),
        Err(e) => return Err(Answer::text(400, &format!("malformed request: {e}\n"))),
    }
    let (Some(method), Some(target), Some(version)) =
        (request.method, request.path, request.version)
    else {
        return Err(Answer::text(400, "malformed request\n"));
    };
    let hosts: Vec<&[u8]> = request
        .headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("host"))
        .map(|h| h.value)
        .collect();
    let host = match hosts.as_slice() {
        [] if version == 0 => None,
        [value] => Some(
            std::str::from_utf8(value)
                .map_err(|_| Answer::text(400, "the Host header is not text\n"))?
                .trim()
                .to_string(),
        ),
        [] => {
            return Err(Answer::text(
                400,
                "an HTTP/1.1 request needs a Host header\n",
            ))
        }
        _ => return Err(Answer::text(400, "more than one Host header\n")),
    };
    Ok(Parsed {
        method: method.to_string(),
        target: target.to_string(),
        host,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::net::TcpStream as StdStream;

    fn limits() -> Limits {
        Limits {
            connections: 64,
            answering: 8,
            request_deadline: Duration::from_secs(10),
            answer_deadline: Duration::from_secs(10),
            linger: Duration::from_secs(2),
            workers: 2,
        }
    }

    /// Runs a server with `limits` and `handler` in a thread for the time of `test`, which gets
    /// its address.
    fn with_server(limits: Limits, handler: &Handler<'_>, test: impl FnOnce(SocketAddr)) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let server = Server::new(listener, limits).unwrap();
        let stopper = server.stopper();
        std::thread::scope(|scope| {
            let running = scope.spawn(|| server.run(handler));
            // Stops the server also when the test fails.
            struct Stop(Stopper);
            impl Drop for Stop {
                fn drop(&mut self) {
                    self.0.stop();
                }
            }
            let _stop = Stop(stopper);
            test(address);
            drop(_stop);
            running.join().unwrap().unwrap();
        });
    }

    fn echo(request: &Request) -> Answer {
        Answer::text(200, &format!("{} {}\n", request.method, request.target))
    }

    /// Sends `request` and reads the whole answer: status and body.
    fn exchange(address: SocketAddr, request: &str) -> (u16, String) {
        let mut stream = StdStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        read_answer(&mut stream)
    }

    fn read_answer(stream: &mut StdStream) -> (u16, String) {
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        let status = text
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status in {text:?}"));
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string());
        (status, body.unwrap_or_default())
    }

    #[test]
    fn request_heads_are_parsed_or_answered() {
        let parsed = parse(b"GET /a.html?x HTTP/1.1\r\nHost: h:1\r\n\r\n").unwrap();
        assert_eq!(
            parsed,
            Parsed {
                method: "GET".into(),
                target: "/a.html?x".into(),
                host: Some("h:1".into())
            }
        );
        // HTTP/1.0 may leave Host out; HTTP/1.1 may not, nor give two.
        assert_eq!(parse(b"GET / HTTP/1.0\r\n\r\n").unwrap().host, None);
        assert_eq!(parse(b"GET / HTTP/1.1\r\n\r\n").unwrap_err().status, 400);
        let two = b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n";
        assert_eq!(parse(two).unwrap_err().status, 400);
        assert_eq!(parse(b"\x01\x02 nonsense\r\n\r\n").unwrap_err().status, 400);
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n"), None);
        assert_eq!(head_end(b"GET / HTTP/1.0\r\n\r\nrest"), Some(18));
    }

    #[test]
    fn answers_get_and_head_and_closes() {
        with_server(limits(), &echo, |address| {
            let (status, body) = exchange(address, "GET /x?y HTTP/1.1\r\nHost: h\r\n\r\n");
            assert_eq!((status, body.as_str()), (200, "GET /x?y\n"));
            let (status, body) = exchange(address, "HEAD /x HTTP/1.1\r\nHost: h\r\n\r\n");
            assert_eq!((status, body.as_str()), (200, ""));
            let (status, _) = exchange(address, "GET / HTTP/1.1\r\n\r\n");
            assert_eq!(status, 400);
            let huge = format!("GET / HTTP/1.1\r\nX: {}\r\n", "a".repeat(MAX_HEAD_BYTES));
            assert_eq!(exchange(address, &huge).0, 431);
        });
    }

    /// A client that sends its head a line at a time, each well within any per-read timeout,
    /// is answered 408 when the deadline of the whole request has passed, and closed, while it
    /// still has lines to send.
    #[test]
    fn a_slow_head_is_cut_at_the_deadline_of_the_whole_request() {
        let limits = Limits {
            request_deadline: Duration::from_millis(500),
            ..limits()
        };
        with_server(limits, &echo, |address| {
            let mut stream = StdStream::connect(address).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(60)))
                .unwrap();
            stream.write_all(b"GET / HTTP/1.1\r\n").unwrap();
            let mut sent = 0;
            // 200 lines 50 ms apart would take 10 s, 20 times the deadline.
            for i in 0..200 {
                std::thread::sleep(Duration::from_millis(50));
                if stream
                    .write_all(format!("X-{i}: y\r\n").as_bytes())
                    .is_err()
                {
                    break;
                }
                sent += 1;
                let mut peek = [0u8; 1];
                stream.set_nonblocking(true).unwrap();
                let answered = stream.peek(&mut peek).is_ok();
                stream.set_nonblocking(false).unwrap();
                if answered {
                    break;
                }
            }
            assert!(sent < 200, "the server waited for every line");
            let (status, _) = read_answer(&mut stream);
            assert_eq!(status, 408);
        });
    }

    /// Idle connections hold no thread: with two workers and many idle connections, a request
    /// is answered at once; beyond the connection limit a connection gets 503.
    #[test]
    fn idle_connections_hold_no_worker_and_the_limit_is_answered_503() {
        let limits = Limits {
            connections: 40,
            ..limits()
        };
        with_server(limits, &echo, |address| {
            let idle: Vec<StdStream> = (0..39)
                .map(|_| StdStream::connect(address).unwrap())
                .collect();
            let (status, body) = exchange(address, "GET /a HTTP/1.1\r\nHost: h\r\n\r\n");
            assert_eq!((status, body.as_str()), (200, "GET /a\n"));
            // The answered connection may still be closing; once it has gone, the 40th slot
            // is the only one left. Two more: at least one is beyond the limit.
            let _extra = StdStream::connect(address).unwrap();
            let mut beyond = StdStream::connect(address).unwrap();
            beyond
                .set_read_timeout(Some(Duration::from_secs(60)))
                .unwrap();
            let (status, body) = read_answer(&mut beyond);
            assert_eq!(status, 503, "{body}");
            // The idle connections are still open and unanswered.
            for mut s in idle {
                s.set_nonblocking(true).unwrap();
                let mut b = [0u8; 1];
                let e = s.read(&mut b).unwrap_err();
                assert_eq!(e.kind(), ErrorKind::WouldBlock);
            }
        });
    }

    /// Requests beyond `answering` are answered 503 while the workers are busy, and a handler
    /// that panics gets its request a 500 without ending its worker.
    #[test]
    fn busy_workers_make_503_and_a_panic_makes_500() {
        let limits = Limits {
            answering: 1,
            workers: 1,
            ..limits()
        };
        let (entered_tx, entered) = mpsc::channel::<()>();
        let (release, release_rx) = mpsc::channel::<()>();
        let entered_tx = Mutex::new(entered_tx);
        let release_rx = Mutex::new(release_rx);
        let handler = |request: &Request| -> Answer {
            match request.target.as_str() {
                "/slow" => {
                    entered_tx.lock().unwrap().send(()).unwrap();
                    release_rx.lock().unwrap().recv().unwrap();
                    Answer::text(200, "slow\n")
                }
                "/panic" => panic!("a bug"),
                _ => echo(request),
            }
        };
        with_server(limits, &handler, |address| {
            let slow = std::thread::spawn(move || {
                exchange(address, "GET /slow HTTP/1.1\r\nHost: h\r\n\r\n")
            });
            entered.recv().unwrap();
            let (status, _) = exchange(address, "GET /b HTTP/1.1\r\nHost: h\r\n\r\n");
            assert_eq!(status, 503);
            release.send(()).unwrap();
            assert_eq!(slow.join().unwrap(), (200, "slow\n".to_string()));
            let (status, _) = exchange(address, "GET /panic HTTP/1.1\r\nHost: h\r\n\r\n");
            assert_eq!(status, 500);
            let (status, _) = exchange(address, "GET /c HTTP/1.1\r\nHost: h\r\n\r\n");
            assert_eq!(status, 200);
        });
    }
}
