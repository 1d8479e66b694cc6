//! One file per subcommand.

mod bisect;
mod calibrate;
pub(crate) mod child;
mod compare;
mod database;
mod delete;
mod docs;
mod env;
mod export;
mod history;
mod import;
pub mod list;
mod load;
mod merge;
mod monitor;
mod note;
mod plot;
pub mod report;
mod run;
mod schedule;
mod serve;
mod sessions;
mod show;
mod sync;
mod system;
mod tag;
mod trace;

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::{Cli, Command};

pub fn dispatch(cli: Cli) -> Result<ExitCode> {
    let db = cli.db.as_deref();
    match cli.command {
        Command::Run(args) => run::run(args, db),
        Command::List(args) => list::list(args),
        Command::Show(args) => show::show(args, db),
        Command::Sessions(args) => sessions::sessions(args, db),
        Command::Tag(args) => tag::tag(args, db),
        Command::Note(args) => note::note(args, db),
        Command::Delete(args) => delete::delete(args, db),
        Command::Env(command) => env::env(command, db),
        Command::System(command) => system::system(command),
        Command::Monitor(args) => monitor::monitor(args, db),
        Command::Schedule(command) => schedule::schedule(command, db),
        Command::Db(command) => database::database(command, db),
        Command::Compare(args) => compare::compare(args, db),
        Command::History(args) => history::history(args, db),
        Command::Calibrate(args) => calibrate::calibrate(args, db),
        Command::Bisect(command) => bisect::bisect(command, db),
        Command::Export(args) => export::export(args, db),
        Command::Import(args) => import::import(args, db),
        Command::Sync(args) => sync::sync(args, db),
        Command::Merge(args) => merge::merge(args),
        Command::Plot(args) => plot::plot(args, db),
        Command::Trace(args) => trace::trace(args, db),
        Command::Report(args) => report::report(args, db),
        Command::Serve(args) => serve::serve(args, db),
        Command::Completions { shell } => docs::completions(shell),
        Command::Man { command } => docs::man(command.as_deref()),
        Command::Child { serve } => Ok(child::child(serve)),
        Command::Load { args } => Ok(load::load(&args)),
    }
}
