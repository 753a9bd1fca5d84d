//! Reading a file from the volume the image was loaded from (`EFI_LOADED_IMAGE_PROTOCOL`
//! → `EFI_SIMPLE_FILE_SYSTEM_PROTOCOL` → `EFI_FILE_PROTOCOL`) into pages of
//! `EfiLoaderData`, which stay the hypervisor's after ExitBootServices.

use core::ffi::c_void;
use core::ptr::null_mut;

use uefi_raw::protocol::device_path::DevicePathProtocol;
use uefi_raw::protocol::file_system::{
    FileAttribute, FileMode, FileProtocolV1, SimpleFileSystemProtocol,
};
use uefi_raw::protocol::loaded_image::LoadedImageProtocol;
use uefi_raw::protocol::media::LoadFile2Protocol;
use uefi_raw::table::boot::{AllocateType, BootServices, MemoryType};
use uefi_raw::{guid, Boolean, Guid, Handle, Status};

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

/// `LINUX_EFI_INITRD_MEDIA_GUID`: the vendor media device path under which a loader (GRUB's
/// `initrd`, systemd-boot, the Linux EFI stub convention) offers the initrd through
/// `EFI_LOAD_FILE2_PROTOCOL`.
const INITRD_MEDIA_GUID: Guid = guid!("5568e427-68fc-4f3d-ac74-ca555231cc68");

/// The device path `VenMedia(INITRD_MEDIA_GUID)/End`.
#[repr(C, packed)]
struct InitrdDevicePath {
    /// Media (4) / vendor (3), 20 bytes.
    vendor: [u8; 4],
    guid: Guid,
    /// End of the entire device path (0x7f / 0xff), 4 bytes.
    end: [u8; 4],
}

static INITRD_PATH: InitrdDevicePath = InitrdDevicePath {
    vendor: [4, 3, 20, 0],
    guid: INITRD_MEDIA_GUID,
    end: [0x7f, 0xff, 4, 0],
};

/// The initrd a loader offers through `EFI_LOAD_FILE2_PROTOCOL` on the
/// `LINUX_EFI_INITRD_MEDIA` device path (GRUB's `linux` + `initrd` on EFI), read into
/// newly allocated `EfiLoaderData` pages.
///
/// # Safety
/// Boot services must be running.
pub unsafe fn read_initrd_media(bs: &BootServices) -> Result<Range, Status> {
    let mut path = &INITRD_PATH as *const InitrdDevicePath as *const DevicePathProtocol;
    let mut handle: Handle = null_mut();
    // SAFETY: boot services are up (caller); the device path is a valid, terminated one.
    check(unsafe { (bs.locate_device_path)(&LoadFile2Protocol::GUID, &mut path, &mut handle) })?;
    let mut lf: *mut c_void = null_mut();
    // SAFETY: as above; the handle came from the firmware.
    check(unsafe { (bs.handle_protocol)(handle, &LoadFile2Protocol::GUID, &mut lf) })?;
    let lf = lf as *mut LoadFile2Protocol;
    let dp = &INITRD_PATH as *const InitrdDevicePath as *const DevicePathProtocol;
    let mut size = 0usize;
    // SAFETY: a size query (null buffer) answers BUFFER_TOO_SMALL with the size.
    let s = unsafe { ((*lf).load_file)(lf, dp, Boolean::FALSE, &mut size, null_mut()) };
    if s != Status::BUFFER_TOO_SMALL || size == 0 {
        return Err(if s == Status::SUCCESS {
            Status::NOT_FOUND
        } else {
            s
        });
    }
    let mut addr = 0u64;
    // SAFETY: boot services are up; the out-pointer is valid.
    check(unsafe {
        (bs.allocate_pages)(
            AllocateType::ANY_PAGES,
            MemoryType::LOADER_DATA,
            size.div_ceil(4096),
            &mut addr,
        )
    })?;
    // SAFETY: `addr` has room for `size` bytes.
    check(unsafe { ((*lf).load_file)(lf, dp, Boolean::FALSE, &mut size, addr as *mut c_void) })?;
    Ok(Range {
        base: addr,
        size: size as u64,
    })
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
