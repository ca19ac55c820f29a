//! Functions Rust's std (1.96) and `errno` link on wasm32-wasip1 that Debian's wasi-libc
//! (0.0~git20220510) does not define. `bash web/wasm.sh` compiles this file into an object and
//! links it into every wasip1 program it builds (`-C link-arg=`). Weak definitions: a libc
//! that defines a symbol wins.
//!
//! WASI preview 1 has no threads: `pthread_create` fails with ENOTSUP (std's
//! `thread::spawn` returns that error, `thread::scope`/`spawn` callers see a panic with it);
//! the attribute functions succeed, since std asserts that they do before `pthread_create`.
//! `fchmod` succeeds and changes nothing: WASI preview 1 has no permission bits (std reads
//! none back, so `set_permissions` with what it read is that no-op). `__errno_location`
//! is the address of wasi-libc's `errno`, the variable std reads.
//!
//! `#![no_core]` (`RUSTC_BOOTSTRAP=1`): a plain `rustc --emit=obj`, no standard library for
//! the target needed. On wasm32 pointers and `int` are both `i32`, the signatures below
//! match the C declarations (wasm-ld checks the types of what it links).
#![feature(no_core, lang_items, linkage, thread_local)]
#![allow(internal_features)]
#![no_core]

#[lang = "pointee_sized"]
pub trait PointeeSized {}
#[lang = "meta_sized"]
pub trait MetaSized: PointeeSized {}
#[lang = "sized"]
pub trait Sized: MetaSized {}

/// `__WASI_ERRNO_NOTSUP`.
const ENOTSUP: i32 = 58;

unsafe extern "C" {
    #[thread_local]
    static mut errno: i32;
}

#[no_mangle]
#[linkage = "weak"]
pub extern "C" fn pthread_attr_init(_attr: i32) -> i32 {
    0
}

#[no_mangle]
#[linkage = "weak"]
pub extern "C" fn pthread_attr_destroy(_attr: i32) -> i32 {
    0
}

#[no_mangle]
#[linkage = "weak"]
pub extern "C" fn pthread_attr_setstacksize(_attr: i32, _size: i32) -> i32 {
    0
}

#[no_mangle]
#[linkage = "weak"]
pub extern "C" fn pthread_create(_thread: i32, _attr: i32, _start: i32, _arg: i32) -> i32 {
    ENOTSUP
}

#[no_mangle]
#[linkage = "weak"]
pub extern "C" fn pthread_join(_thread: i32, _result: i32) -> i32 {
    ENOTSUP
}

#[no_mangle]
#[linkage = "weak"]
pub extern "C" fn pthread_detach(_thread: i32) -> i32 {
    ENOTSUP
}

#[no_mangle]
#[linkage = "weak"]
pub extern "C" fn fchmod(_fd: i32, _mode: i32) -> i32 {
    0
}

#[no_mangle]
#[linkage = "weak"]
pub extern "C" fn __errno_location() -> *mut i32 {
    &raw mut errno
}
