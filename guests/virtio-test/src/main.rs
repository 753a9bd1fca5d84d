#![no_std]
#![no_main]
guest_rt::entry!(main);
fn main(_dtb: usize) -> ! { guest_rt::psci::system_off() }
