//! `network = "none"` for a stdio server: what the child can reach, and
//! the two existing mechanisms that make it so.
//!
//! Rules (Linux; elsewhere `none` is declared only, and the server's
//! status line says so):
//! - **Network namespace.** The server runs under `unshare -rn`: a new
//!   user and network namespace whose only device is a loopback that is
//!   down. No IP route out exists, this machine's loopback included, and
//!   abstract unix sockets (which belong to a network namespace) are the
//!   namespace's own, so the host's are out of reach.
//! - **Seccomp filter.** The process is started from a thread that first
//!   installs a seccomp filter (compiled by the `seccompiler` crate;
//!   inherited by the child and everything it starts, kept across
//!   `execve`, never removable): `socket(2)` fails with `EACCES` for every
//!   family but `AF_INET`, `AF_INET6` (both only reach the empty
//!   namespace) and `AF_NETLINK` (the namespace's own routing tables);
//!   `socketpair(2)` only makes connected `AF_UNIX` stream or seqpacket
//!   pairs (a datagram pair could `sendto` a path); `io_uring`, which
//!   makes sockets without those calls, is refused; x32 system calls are
//!   refused (a check spliced in after `seccompiler`'s architecture check,
//!   which is verified to be the three instructions it expects, load
//!   arch, jump if x86-64, kill, before anything is spliced: a
//!   `seccompiler` that lays its program out otherwise is a
//!   [`ConfineError::Filter`] and the server is not started, never a
//!   misplaced check). So the child cannot make a socket that could name a path:
//!   **no host unix socket is reachable, wherever it lives in the
//!   filesystem** (`/tmp`, `/run`, a home directory, a docker or D-Bus
//!   socket, an ssh agent), nor `AF_VSOCK`, `AF_PACKET` and the rest.
//!   The thread exists only to spawn and ends at once, so the host itself
//!   is never filtered. `no_new_privs` is set with it: a set-user-ID
//!   program the server starts gains nothing.
//! - **Environment.** Agent-socket variables (`SSH_AUTH_SOCK`,
//!   `GPG_AGENT_INFO`, `DBUS_SESSION_BUS_ADDRESS`, ...) never reach any
//!   child unless passed explicitly: the spawn policy's deny-list, for
//!   every child, not only these.
//!
//! What `none` does not cover: the filesystem (the server reads and
//! writes what its user may), other processes' inherited descriptors (a
//! child gets only its stdio pipes), signals to processes of the same
//! user, and a program that is not a native binary of the host's
//! architecture (a 32-bit program is killed by the filter's architecture
//! check at its first system call).

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// Why a confined process could not be started.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfineError {
    #[error("the seccomp filter could not be built: {0}")]
    Filter(String),
    #[error("the seccomp filter could not be installed: {0}")]
    Install(String),
    #[error("{0}")]
    Spawn(std::io::Error),
    #[error("the spawning thread ended without a result")]
    Thread,
}

/// The errno every refused call gets: "Permission denied".
const REFUSED: u32 = libc::EACCES as u32;

/// Socket families a `network = "none"` child may still create: they reach
/// only its own empty network namespace.
const FAMILIES: [i32; 3] = [libc::AF_INET, libc::AF_INET6, libc::AF_NETLINK];

/// `socketpair` types (the low bits of the type argument) that cannot
/// address anything: connected stream and seqpacket pairs.
const PAIR_TYPES: [u64; 2] = [libc::SOCK_STREAM as u64, libc::SOCK_SEQPACKET as u64];

/// System call numbers at and above this are x32's, which a filter written
/// for x86-64 numbers would let through.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, ConfineError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value)
        .map_err(|e| ConfineError::Filter(e.to_string()))
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, ConfineError> {
    SeccompRule::new(conditions).map_err(|e| ConfineError::Filter(e.to_string()))
}

/// The filter of the module docs, for this machine's architecture.
pub(crate) fn program() -> Result<BpfProgram, ConfineError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| ConfineError::Filter(e.to_string()))?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    // socket(family, ...): refused unless the family is one of FAMILIES.
    let other_family = FAMILIES
        .iter()
        .map(|&f| cond(0, SeccompCmpOp::Ne, f as u64))
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_socket, vec![rule(other_family)?]);
    // socketpair(family, type, ...): refused unless AF_UNIX and a pair type.
    let mut pair = vec![rule(vec![cond(
        0,
        SeccompCmpOp::Ne,
        libc::AF_UNIX as u64,
    )?])?];
    for kind in (0..16u64).filter(|k| !PAIR_TYPES.contains(k)) {
        pair.push(rule(vec![cond(1, SeccompCmpOp::MaskedEq(0xf), kind)?])?);
    }
    rules.insert(libc::SYS_socketpair, pair);
    for call in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        rules.insert(call, Vec::new());
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(REFUSED),
        arch,
    )
    .map_err(|e| ConfineError::Filter(e.to_string()))?;
    let mut program =
        BpfProgram::try_from(filter).map_err(|e| ConfineError::Filter(e.to_string()))?;
    if arch == TargetArch::x86_64 {
        refuse_x32(&mut program)?;
    }
    Ok(program)
}

// Opcodes from linux/bpf_common.h.
const LD_W_ABS: u16 = 0x20; // BPF_LD (0x00) | BPF_W (0x00) | BPF_ABS (0x20)
const JMP_JEQ_K: u16 = 0x15; // BPF_JMP (0x05) | BPF_JEQ (0x10) | BPF_K (0x00)
const JMP_JGE_K: u16 = 0x35; // BPF_JMP (0x05) | BPF_JGE (0x30) | BPF_K (0x00)
const RET_K: u16 = 0x06; // BPF_RET (0x06) | BPF_K (0x00)

/// `AUDIT_ARCH_X86_64` (linux/audit.h): `EM_X86_64` (62), 64-bit,
/// little-endian.
const AUDIT_ARCH_X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;

/// Where `seccomp_data` holds the architecture.
const SECCOMP_DATA_ARCH_OFFSET: u32 = 4;

/// Whether `program` starts with the x86-64 architecture check
/// `seccompiler` 0.5 emits: load the architecture, skip the next
/// instruction if it is x86-64, else kill the process.
fn starts_with_arch_check(program: &[seccompiler::sock_filter]) -> bool {
    let [load, jump, kill, ..] = program else {
        return false;
    };
    (load.code, load.k) == (LD_W_ABS, SECCOMP_DATA_ARCH_OFFSET)
        && (jump.code, jump.jt, jump.jf, jump.k) == (JMP_JEQ_K, 1, 0, AUDIT_ARCH_X86_64)
        && (kill.code, kill.k) == (RET_K, libc::SECCOMP_RET_KILL_PROCESS)
}

/// Inserts, after the architecture check `seccompiler` puts first (three
/// instructions, checked to be what they should be), a check that refuses
/// every x32 system call number.
fn refuse_x32(program: &mut BpfProgram) -> Result<(), ConfineError> {
    use seccompiler::sock_filter;
    if !starts_with_arch_check(program) {
        return Err(ConfineError::Filter(
            "seccompiler's program does not start with the architecture check the x32 \
             refusal follows (load arch, jump if x86-64, kill)"
                .to_owned(),
        ));
    }
    let check = [
        // Load the system call number (offset 0 of `seccomp_data`).
        sock_filter {
            code: LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0,
        },
        // x32 → the next instruction (refuse); else skip it.
        sock_filter {
            code: JMP_JGE_K,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        sock_filter {
            code: RET_K,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | REFUSED,
        },
    ];
    program.splice(3..3, check);
    Ok(())
}

/// Whether the filter can be installed here: an architecture `seccompiler`
/// supports and a kernel with seccomp filters. A filter that then cannot be
/// built (say, a `seccompiler` whose program the x32 check does not
/// recognise) fails the spawn; it never makes `none` "declared only".
pub(crate) fn available() -> bool {
    TargetArch::try_from(std::env::consts::ARCH).is_ok()
        && std::fs::read_to_string("/proc/self/status")
            .is_ok_and(|status| status.lines().any(|l| l.starts_with("Seccomp_filters:")))
}

/// Starts `command` from a new thread that installs the filter first, so
/// the child (and all it starts) inherits it and the host does not.
pub(crate) async fn spawn(
    mut command: tokio::process::Command,
) -> Result<tokio::process::Child, ConfineError> {
    let program = program()?;
    let runtime = tokio::runtime::Handle::current();
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("oscova-mcp-confine".to_owned())
        .spawn(move || {
            let spawned = seccompiler::apply_filter(&program)
                .map_err(|e| ConfineError::Install(e.to_string()))
                .and_then(|()| {
                    let _runtime = runtime.enter();
                    command.spawn().map_err(ConfineError::Spawn)
                });
            let _ = tx.send(spawned);
        })
        .map_err(ConfineError::Spawn)?;
    rx.await.map_err(|_| ConfineError::Thread)?
}

#[cfg(test)]
mod tests {
    use super::*;

    use seccompiler::sock_filter;

    fn op(code: u16, jt: u8, jf: u8, k: u32) -> sock_filter {
        sock_filter { code, jt, jf, k }
    }

    #[test]
    fn the_filter_builds_with_the_x32_check_after_the_architecture_check() {
        let program = program().expect("a filter for this architecture");
        if std::env::consts::ARCH == "x86_64" {
            assert!(starts_with_arch_check(&program));
            let x32: Vec<_> = program[3..6].iter().map(|i| (i.code, i.k)).collect();
            assert_eq!(
                x32,
                [
                    (LD_W_ABS, 0),
                    (JMP_JGE_K, X32_SYSCALL_BIT),
                    (RET_K, libc::SECCOMP_RET_ERRNO | REFUSED)
                ]
            );
        }
        assert!(available());
    }

    /// Review of issue 24: the x32 check was spliced at offset 3 whatever
    /// `seccompiler` put there; a program laid out otherwise is refused.
    #[test]
    fn a_program_without_the_expected_prologue_is_refused_not_spliced() {
        let load = || op(LD_W_ABS, 0, 0, SECCOMP_DATA_ARCH_OFFSET);
        let jump = |jt, k| op(JMP_JEQ_K, jt, 0, k);
        let kill = || op(RET_K, 0, 0, libc::SECCOMP_RET_KILL_PROCESS);
        let allow = || op(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW);
        let mut good: BpfProgram = vec![load(), jump(1, AUDIT_ARCH_X86_64), kill(), allow()];
        refuse_x32(&mut good).unwrap();
        assert_eq!(good.len(), 7);
        assert_eq!(good[4].k, X32_SYSCALL_BIT);

        let mangled: Vec<BpfProgram> = vec![
            // Another architecture's value.
            vec![load(), jump(1, 0xC000_00B7), kill(), allow()],
            // One instruction more before the kill (the jump lands elsewhere).
            vec![load(), jump(2, AUDIT_ARCH_X86_64), allow(), kill()],
            // The system call number loaded first.
            vec![
                op(LD_W_ABS, 0, 0, 0),
                jump(1, AUDIT_ARCH_X86_64),
                kill(),
                allow(),
            ],
            // Too short.
            vec![load(), jump(1, AUDIT_ARCH_X86_64)],
        ];
        for mut program in mangled {
            let before = program.clone();
            let err = refuse_x32(&mut program).unwrap_err();
            assert!(matches!(err, ConfineError::Filter(_)), "{err}");
            assert_eq!(program, before, "nothing spliced");
        }
    }
}
