//! The loads, one file each: its registry entry (the [`Description`] `--load`, `list -v` and
//! `--help` show, what its options leave to the machine, what it runs) next to its work, and
//! the [`registry`].
//!
//! Adding a load: its file here, with an `entry()`, and its line in [`registry`]; a load that
//! runs a program of a new kind also needs its [`Program`] started in
//! `crate::supervisor::start_work`.

mod command;
mod cpu;
mod hackbench;
mod io;
mod memory;
mod net;
mod osadl;

use std::path::Path;
use std::sync::mpsc::Sender;
use std::sync::LazyLock;

use vernier_model::{Describe, Description, Kind, Options, Registry};

use crate::supervisor::HackbenchParams;

/// Every load, in the order help lists them.
pub fn registry() -> &'static Registry<Entry> {
    static REGISTRY: LazyLock<Registry<Entry>> = LazyLock::new(|| {
        Registry::new(
            Kind::Load,
            vec![
                cpu::entry(),
                hackbench::entry(),
                memory::entry(),
                io::entry(),
                net::entry(),
                osadl::entry(),
                command::entry(),
            ],
        )
    });
    &REGISTRY
}

/// A load of the registry: what it says about itself, what its options leave to the machine,
/// and what it runs.
#[derive(Debug)]
pub struct Entry {
    description: Description,
    complete: Complete,
    work: Work,
}

/// Fills in, once the options are typed and their defaults set, what they leave to the machine
/// (the online CPUs), and checks what their types cannot say (a required option). The error
/// is one line; the caller names the load.
type Complete = fn(&mut Options, online: &[usize]) -> Result<(), String>;

/// Starts the threads of an in-process load: its options, the directory it may write in, where
/// a thread reports the error that ended it.
type StartThreads = fn(&Options, Option<&Path>, &Sender<String>) -> Result<(), String>;

/// What a load runs in its supervisor.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Work {
    /// Threads of the supervisor; `writes_files`: it gets a fresh directory, under its `dir`
    /// option or the temporary directory.
    Threads {
        start: StartThreads,
        writes_files: bool,
    },
    /// A program the supervisor starts, and starts again when it ends.
    Program(fn(&Options) -> Program),
}

/// A program a load runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Program {
    /// `sh -c COMMAND`.
    Shell(String),
    /// One hackbench, which the binary runs (this crate does not see the benchmarks).
    Hackbench(HackbenchParams),
}

impl Entry {
    fn new(description: Description, complete: Complete, work: Work) -> Self {
        Entry {
            description,
            complete,
            work,
        }
    }

    pub(crate) fn complete(&self, options: &mut Options, online: &[usize]) -> Result<(), String> {
        (self.complete)(options, online)
    }

    pub(crate) fn work(&self) -> Work {
        self.work
    }
}

impl Describe for Entry {
    fn description(&self) -> &Description {
        &self.description
    }
}

/// A [`Complete`] for loads whose options need nothing of the machine.
fn complete_nothing(_: &mut Options, _: &[usize]) -> Result<(), String> {
    Ok(())
}
