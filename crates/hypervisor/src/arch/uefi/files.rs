//! Reading a file from the volume the image was loaded from (`EFI_LOADED_IMAGE_PROTOCOL`
//! → `EFI_SIMPLE_FILE_SYSTEM_PROTOCOL` → `EFI_FILE_PROTOCOL`) into pages of
//! `EfiLoaderData`, which stay the hypervisor's after ExitBootServices.

use core::ffi::c_void;
use core::ptr::null_mut;

use uefi_raw::protocol::file_system::{
    FileAttribute, FileMode, FileProtocolV1, SimpleFileSystemProtocol,
};
use uefi_raw::protocol::loaded_image::LoadedImageProtocol;
use uefi_raw::table::boot::{AllocateType, BootServices, MemoryType};
use uefi_raw::{Handle, Status};

use crate::platform::Range;

/// Longest path accepted (UCS-2 units, with the NUL).
const PATH_MAX: usize = 128;

fn check(s: Status) -> Result<(), Status> {
    if s == Status::SUCCESS {
        Ok(())
    } else {
        Err(s)
    }
}

/// A short description of a failure status.
pub fn describe(s: Status) -> &'static str {
    match s {
        Status::NOT_FOUND => "not found",
        Status::OUT_OF_RESOURCES => "out of memory",
        Status::UNSUPPORTED => "the boot device has no file system",
        Status::DEVICE_ERROR => "device error",
        _ => "firmware error",
    }
}

/// The image's `LoadOptions` as UCS-2 units (empty when there are none).
///
/// # Safety
/// Boot services must be running; `image` must be the running image's handle. The slice
/// lives in firmware memory: use it before ExitBootServices.
pub unsafe fn load_options(bs: &BootServices, image: Handle) -> &'static [u16] {
    let mut li: *mut c_void = null_mut();
    // SAFETY: boot services are up (caller); the out-pointer is valid.
    if check(unsafe { (bs.handle_protocol)(image, &LoadedImageProtocol::GUID, &mut li) }).is_err() {
        return &[];
    }
    // SAFETY: the firmware returned the protocol for our image.
    let li = unsafe { &*(li as *const LoadedImageProtocol) };
    if li.load_options.is_null() || li.load_options_size < 2 {
        return &[];
    }
    // SAFETY: the firmware says `load_options_size` bytes are there; UCS-2 is 2-aligned.
    unsafe {
        core::slice::from_raw_parts(
            li.load_options as *const u16,
            li.load_options_size as usize / 2,
        )
    }
}

/// Reads the file at `path` (backslash-separated, from the root of the volume `image` was
/// loaded from) into newly allocated `EfiLoaderData` pages; returns where and how big.
///
/// # Safety
/// Boot services must be running; `image` must be the running image's handle.
pub unsafe fn read_file(bs: &BootServices, image: Handle, path: &str) -> Result<Range, Status> {
    let mut name = [0u16; PATH_MAX];
    if path.len() >= PATH_MAX || !path.is_ascii() {
        return Err(Status::INVALID_PARAMETER);
    }
    for (d, c) in name.iter_mut().zip(path.bytes()) {
        *d = u16::from(c);
    }
    let mut li: *mut c_void = null_mut();
    // SAFETY: boot services are up (caller); the out-pointer is valid.
    check(unsafe { (bs.handle_protocol)(image, &LoadedImageProtocol::GUID, &mut li) })?;
    // SAFETY: the firmware returned the protocol for our image.
    let device = unsafe { (*(li as *const LoadedImageProtocol)).device_handle };
    let mut fs: *mut c_void = null_mut();
    // SAFETY: as above.
    check(unsafe { (bs.handle_protocol)(device, &SimpleFileSystemProtocol::GUID, &mut fs) })?;
    let fs = fs as *mut SimpleFileSystemProtocol;
    let mut root: *mut FileProtocolV1 = null_mut();
    // SAFETY: `fs` is the firmware's protocol instance.
    check(unsafe { ((*fs).open_volume)(fs, &mut root) })?;
    let mut file: *mut FileProtocolV1 = null_mut();
    // SAFETY: `root` is an open directory; `name` is NUL-terminated.
    let opened = check(unsafe {
        ((*root).open)(
            root,
            &mut file,
            name.as_ptr(),
            FileMode::READ,
            FileAttribute::empty(),
        )
    });
    // SAFETY: `root` is open.
    let _ = unsafe { ((*root).close)(root) };
    opened?;
    // SAFETY: `file` is open for reading.
    let result = unsafe { read_whole(bs, file) };
    // SAFETY: as above.
    let _ = unsafe { ((*file).close)(file) };
    result
}

/// Size via SetPosition(end) / GetPosition, then one allocation and reads until done.
unsafe fn read_whole(bs: &BootServices, file: *mut FileProtocolV1) -> Result<Range, Status> {
    let mut size = 0u64;
    // SAFETY: `file` is open; position u64::MAX means end of file (UEFI 13.5).
    unsafe {
        check(((*file).set_position)(file, u64::MAX))?;
        check(((*file).get_position)(file, &mut size))?;
        check(((*file).set_position)(file, 0))?;
    }
    let pages = (size.max(1)).div_ceil(4096) as usize;
    let mut addr = 0u64;
    // SAFETY: boot services are up; the out-pointer is valid.
    check(unsafe {
        (bs.allocate_pages)(
            AllocateType::ANY_PAGES,
            MemoryType::LOADER_DATA,
            pages,
            &mut addr,
        )
    })?;
    let mut done = 0u64;
    while done < size {
        let mut n = (size - done) as usize;
        // SAFETY: the buffer has `size` bytes from `addr`; `n` fits in what is left.
        check(unsafe { ((*file).read)(file, &mut n, (addr + done) as *mut c_void) })?;
        if n == 0 {
            return Err(Status::DEVICE_ERROR);
        }
        done += n as u64;
    }
    Ok(Range { base: addr, size })
}
