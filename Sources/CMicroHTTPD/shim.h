#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>

// MHD_start_daemon, MHD_get_connection_info and MHD_get_daemon_info are variadic: Swift needs
// one-line wrappers. Options go in an MHD_OPTION_ARRAY (the array ends with MHD_OPTION_END).
static inline struct MHD_Daemon *cmhd_start_daemon(unsigned int flags, MHD_AccessHandlerCallback handler, void *handler_cls, struct MHD_OptionItem *options) { return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_cls, MHD_OPTION_ARRAY, options, MHD_OPTION_END); }
static inline const union MHD_ConnectionInfo *cmhd_get_connection_info(struct MHD_Connection *c, enum MHD_ConnectionInfoType t) { return MHD_get_connection_info(c, t); }
static inline const union MHD_DaemonInfo *cmhd_get_daemon_info(struct MHD_Daemon *d, enum MHD_DaemonInfoType t) { return MHD_get_daemon_info(d, t); }
static inline ssize_t cmhd_content_reader_end_of_stream(void) { return MHD_CONTENT_READER_END_OF_STREAM; }
static inline ssize_t cmhd_content_reader_end_with_error(void) { return MHD_CONTENT_READER_END_WITH_ERROR; }
static inline enum MHD_Result cmhd_set_response_flags(struct MHD_Response *r, enum MHD_ResponseFlags flags) { return MHD_set_response_options(r, flags, MHD_RO_END); }
