/* Temporary names, atomic publication and error sentences for result files: see fileutil.h.
 *
 * The temporary file lives in the final file's directory because rename() is atomic only within one file
 * system; its name starts with a dot so that a directory listing or ParaView's file dialog does not offer it,
 * and carries the process id so that two runs writing into one folder do not clobber each other's
 * half-written files. */
#include "fileutil.h"

#include "fem/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

void fileutil_shown_path(const char *path, char *out, size_t size)
{
    const char *stage = strstr(path, "/" FILEUTIL_STAGE_PREFIX);
    if (stage) stage++;
    else if (strncmp(path, FILEUTIL_STAGE_PREFIX, strlen(FILEUTIL_STAGE_PREFIX)) == 0) stage = path;
    const char *after = stage ? strchr(stage, '/') : NULL;
    if (after) snprintf(out, size, "%.*s%s", (int)(stage - path), path, after + 1);
    else snprintf(out, size, "%s", path);
}

int fileutil_fail(const char *path, int errnum)
{
    char shown[FILEUTIL_PATH_MAX];
    fileutil_shown_path(path, shown, sizeof shown);
    return fem_fail(FEM_ERR_INPUT, "cannot write results file '%s': %s", shown,
                    strerror(errnum ? errnum : EIO));
}

/* Splits `path` at its last '/': the directory part keeps its trailing slash ("" when there is none). */
static size_t dir_length(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? (size_t)(slash - path) + 1 : 0;
}

int fileutil_temp_name(const char *path, char *tmp, size_t size)
{
    size_t d = dir_length(path);
    int n = snprintf(tmp, size, "%.*s.%s.tmp.%ld", (int)d, path, path + d, (long)getpid());
    if (n < 0 || (size_t)n >= size || path[d] == '\0') return fileutil_fail(path, ENAMETOOLONG);
    return FEM_OK;
}

/* Makes the rename itself durable; a failure here is not worth failing a finished file for. */
static void sync_directory_of(const char *path)
{
    char dir[FILEUTIL_PATH_MAX];
    size_t d = dir_length(path);
    if (d == 0) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", (int)d, path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

int fileutil_publish(const char *tmp, const char *path)
{
    int fd = open(tmp, O_RDONLY);
    int err = 0;
    if (fd < 0) err = errno;
    else {
        if (fsync(fd) != 0) err = errno;
        close(fd);
    }
    if (!err && rename(tmp, path) != 0) err = errno;
    if (err) {
        unlink(tmp);
        return fileutil_fail(path, err);
    }
    sync_directory_of(path);
    return FEM_OK;
}

int fileout_open(FileOut *fo, const char *path)
{
    memset(fo, 0, sizeof *fo);
    if (strlen(path) >= sizeof fo->path) return fileutil_fail(path, ENAMETOOLONG);
    strcpy(fo->path, path);
    FEM_TRY(fileutil_temp_name(path, fo->tmp, sizeof fo->tmp));
    fo->fp = fopen(fo->tmp, "wb");
    if (!fo->fp) return fileutil_fail(path, errno);
    return FEM_OK;
}

void fileout_write(FileOut *fo, const void *data, size_t bytes)
{
    if (fo->err || bytes == 0) return;
    errno = 0;
    if (fwrite(data, 1, bytes, fo->fp) != bytes) fo->err = errno ? errno : EIO;
}

void fileout_printf(FileOut *fo, const char *fmt, ...)
{
    if (fo->err) return;
    va_list ap;
    va_start(ap, fmt);
    errno = 0;
    if (vfprintf(fo->fp, fmt, ap) < 0) fo->err = errno ? errno : EIO;
    va_end(ap);
}

void fileout_xml_text(FileOut *fo, const char *text)
{
    for (const char *c = text; *c; c++) {
        switch (*c) {
        case '&': fileout_printf(fo, "&amp;"); break;
        case '<': fileout_printf(fo, "&lt;"); break;
        case '>': fileout_printf(fo, "&gt;"); break;
        case '"': fileout_printf(fo, "&quot;"); break;
        case '\'': fileout_printf(fo, "&apos;"); break;
        default: fileout_write(fo, c, 1);
        }
    }
}

int fileout_commit(FileOut *fo)
{
    if (!fo->fp) return fileutil_fail(fo->path, EBADF);
    if (!fo->err && fflush(fo->fp) != 0) fo->err = errno;
    if (!fo->err && fsync(fileno(fo->fp)) != 0) fo->err = errno;
    if (fclose(fo->fp) != 0 && !fo->err) fo->err = errno;
    fo->fp = NULL;
    if (!fo->err && rename(fo->tmp, fo->path) != 0) fo->err = errno;
    if (fo->err) {
        unlink(fo->tmp);
        return fileutil_fail(fo->path, fo->err);
    }
    sync_directory_of(fo->path);
    return FEM_OK;
}

int fileutil_mkdir_p(const char *dir)
{
    char buf[FILEUTIL_PATH_MAX];
    if (strlen(dir) >= sizeof buf || dir[0] == '\0')
        return fem_fail(FEM_ERR_INPUT, "cannot create output directory '%s': %s", dir,
                        strerror(dir[0] ? ENAMETOOLONG : ENOENT));
    strcpy(buf, dir);
    /* create each prefix ending before a '/', then the whole path */
    for (char *c = buf + 1;; c++) {
        if (*c != '/' && *c != '\0') continue;
        char saved = *c;
        *c = '\0';
        struct stat st;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            int err = errno;
            return fem_fail(FEM_ERR_INPUT, "cannot create output directory '%s': %s", dir, strerror(err));
        }
        /* EEXIST also covers a regular file of that name, which cannot hold results */
        if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
            return fem_fail(FEM_ERR_INPUT, "cannot create output directory '%s': %s", dir, strerror(ENOTDIR));
        *c = saved;
        if (saved == '\0') break;
    }
    return FEM_OK;
}

int fileutil_absolute(const char *path, char *out, size_t size)
{
    char dir[FILEUTIL_PATH_MAX], real[PATH_MAX];
    size_t d = dir_length(path);
    if (d >= sizeof dir) return fileutil_fail(path, ENAMETOOLONG);
    if (d == 0) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", (int)d, path);
    if (!realpath(dir, real)) return fileutil_fail(path, errno);
    int n = snprintf(out, size, "%s%s%s", real, strcmp(real, "/") == 0 ? "" : "/", path + d);
    if (n < 0 || (size_t)n >= size) return fileutil_fail(path, ENAMETOOLONG);
    return FEM_OK;
}

int fileutil_relative(const char *from, const char *to, char *out, size_t size)
{
    size_t df = dir_length(from), dt = dir_length(to);
    int n;
    if (df == dt && strncmp(from, to, df) == 0) { /* one directory: the name alone */
        n = snprintf(out, size, "%s", to + dt);
    } else {
        char a[FILEUTIL_PATH_MAX], b[FILEUTIL_PATH_MAX];
        FEM_TRY(fileutil_absolute(from, a, sizeof a));
        FEM_TRY(fileutil_absolute(to, b, sizeof b));
        size_t common = 0; /* just past the last '/' the two directories share */
        for (size_t i = 0; a[i] && a[i] == b[i]; i++)
            if (a[i] == '/') common = i + 1;
        n = 0;
        out[0] = '\0';
        for (const char *c = a + common; *c && n >= 0 && (size_t)n < size; c++)
            if (*c == '/') n += snprintf(out + n, size - (size_t)n, "../");
        if (n >= 0 && (size_t)n < size) n += snprintf(out + n, size - (size_t)n, "%s", b + common);
    }
    if (n < 0 || (size_t)n >= size) return fileutil_fail(to, ENAMETOOLONG);
    return FEM_OK;
}

/* One entry as the getdents64 system call returns it (Linux's struct linux_dirent64). */
typedef struct {
    uint64_t ino;
    int64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[];
} RawDirent;

/* readdir may allocate, which a signal handler must not; the system call under it does not. */
static void unlink_entries(int fd)
{
    _Alignas(8) char buf[4096];
    long n;
    lseek(fd, 0, SEEK_SET);
    while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
        for (long k = 0; k < n;) {
            const RawDirent *e = (const RawDirent *)(buf + k);
            k += e->reclen;
            const char *s = e->name;
            if (s[0] == '.' && (s[1] == '\0' || (s[1] == '.' && s[2] == '\0'))) continue;
            unlinkat(fd, s, 0);
        }
}

int fileutil_remove_flat_dir(const char *path, int fd)
{
    int own = fd < 0, err = 0;
    if (own) fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? 0 : errno;
    /* another thread of the process may still be creating a file in it: a few passes catch up with it */
    for (int pass = 0; pass < 16; pass++) {
        unlink_entries(fd);
        if (rmdir(path) == 0 || errno == ENOENT) {
            err = 0;
            break;
        }
        err = errno;
        if (err != ENOTEMPTY && err != EEXIST) break;
    }
    if (own) close(fd);
    return err;
}
