#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# The Debian package on this machine, as an operator uses it: lintian
# finds nothing; apt installs build/libnginx-mod-http-malloc_*.deb; the
# system nginx (/usr/sbin/nginx with /etc/nginx/nginx.conf, which loads
# the module through modules-enabled) runs on a loopback port with a test
# site and the environment of the example systemd drop-in; the admin API
# works end to end in every worker, and jeprof and go tool pprof read what
# it serves.  Debian's init script with /etc/default/nginx puts nginx on
# jemalloc too, and its binary upgrade (what upgrading the nginx package
# does) keeps jemalloc only with the env lines of docs/operations.md.
# Then remove and purge: the module is no longer loaded, nothing of the
# package is left, nginx still starts.  The machine's /etc/nginx,
# /etc/default/nginx, logs and /var/lib/nginx are put back as they were.
#
# Needs root and the package (make test builds it with make deb).  It
# skips rather than disturb an nginx that runs or a package installed by
# somebody else.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use File::Temp qw(tempdir);
use HTTP::Tiny;
use IO::Socket::INET;
use POSIX qw(WNOHANG);
use Test::More;
use MallocTest qw(json_decode poll_until free_port alive);

my $pkg = 'libnginx-mod-http-malloc';
my $root = "$FindBin::Bin/..";
my ($deb) = glob "$root/build/${pkg}_*.deb";
my $pidfile = '/run/nginx.pid';
my $dump_dir = '/var/lib/nginx/malloc';
my $link = '/etc/nginx/modules-enabled/50-mod-http-malloc.conf';
my $site = '/etc/nginx/conf.d/malloc-test.conf';
my $example = "/usr/share/doc/$pkg/examples/jemalloc.conf";
my $default_site = '/etc/nginx/sites-enabled/default';
my $default_env = '/etc/default/nginx';

plan skip_all => 'installs a package: needs root' if $> != 0;
plan skip_all => "no package: run make deb" unless defined $deb;
plan skip_all => "$pkg is installed here already; not touching it"
    if installed();
plan skip_all => "the system nginx is running ($pidfile); not touching it"
    if nginx_running();

$ENV{DEBIAN_FRONTEND} = 'noninteractive';

# jeprof and go tool pprof keep their caches under $HOME
my $saved = tempdir(CLEANUP => 1);
$ENV{HOME} = $saved;
$ENV{PPROF_TMPDIR} = "$saved/pprof";

# nginx daemonizes as nginx.service has it do; its master, orphaned,
# becomes our child (PR_SET_CHILD_SUBREAPER, 36) and is reaped here,
# where init might not reap it
require 'sys/syscall.ph';
syscall(&SYS_prctl, 36, 1, 0, 0, 0);

# what the test changes, saved first; END puts it back, pass or fail

my (%log_size, %var_lib, $moved_dump_dir, $etc_saved);
my $saved_default_env = read_file($default_env);

system('cp', '-a', '/etc/nginx', "$saved/etc-nginx") == 0
    or BAIL_OUT('cannot save /etc/nginx');
$etc_saved = 1;

for my $log (glob '/var/log/nginx/*.log') {
    $log_size{$log} = -s $log;
}

for my $dir (glob '/var/lib/nginx/*') {
    my @st = stat $dir or next;
    $var_lib{$dir} = [$st[2] & 07777, $st[4], $st[5]];
}

# earlier tests may have made the default dump directory: purging the
# package removes it, so it steps aside until the end
if (-e $dump_dir) {
    $moved_dump_dir = "$dump_dir.deb-test.$$";
    rename $dump_dir, $moved_dump_dir or BAIL_OUT("rename $dump_dir: $!");
}

END { restore() if $etc_saved }

###############################################################################

SKIP: {
    skip 'lintian is not installed', 1 unless have('lintian');
    my $out = `lintian --allow-root --fail-on error,warning $deb 2>&1`;
    is($? >> 8, 0, 'lintian: no error, no warning') or diag($out);
}

my $build_log = read_file("$root/build/deb/build.log") // '';
unlike($build_log, qr/\bwarning:/, 'the package builds without a warning');

my ($rc, $out);
$out = `apt-get install -y $deb 2>&1`;
is($? >> 8, 0, 'apt-get install ./the.deb') or diag($out);
ok(installed(), 'dpkg: installed');

my $depends = `dpkg-query -W -f '\${Depends}' $pkg`;
my ($abi) = (read_file('/usr/share/nginx/src/debian/libnginx-mod.abisubstvars')
             // '') =~ /^nginx:abi=(\S+)/m;
$abi //= 'no nginx:abi in nginx-dev';
like($depends, qr/(^|, )\Q$abi\E(,|$)/,
     "depends on nginx-dev's ABI ($depends)");
like(`dpkg-query -W -f '\${Provides}' nginx`, qr/\b\Q$abi\E\b/,
     "the installed nginx provides $abi");
like($depends, qr/\blibjansson4\b/, 'depends on libjansson4');
unlike($depends, qr/jemalloc/, 'does not depend on jemalloc (recommends)');

# libiberty.a is linked in: the package names the source it came from
my $arch = `dpkg --print-architecture`;
chomp $arch;
my $source = '${source:Package} (= ${source:Version})';
my $iberty = `dpkg-query -W -f '$source' libiberty-dev:$arch`;
like(`dpkg-query -W -f '\${Built-Using}' $pkg`, qr/^\Q$iberty\E$/,
     "Built-Using: $iberty");

my @files = grep { -f $_ || -l $_ } split /\n/, `dpkg -L $pkg`;
ok(-f '/usr/lib/nginx/modules/ngx_http_malloc_module.so',
   'the module is in /usr/lib/nginx/modules');
is(readlink $link, '/usr/share/nginx/modules-available/mod-http-malloc.conf',
   'enabled in modules-enabled, like Debian\'s own module packages');
is(read_file($link), "load_module modules/ngx_http_malloc_module.so;\n",
   'the load file');
ok(-f $example, 'the systemd drop-in is shipped as an example');

# the drop-in, checked by systemd against Debian's nginx.service

my %env = drop_in_env($example);
my $multiarch = `dpkg-architecture -qDEB_HOST_MULTIARCH`;
chomp $multiarch;
is($env{LD_PRELOAD}, "/usr/lib/$multiarch/libjemalloc.so.2",
   'drop-in: LD_PRELOAD');
is($env{MALLOC_CONF}, 'prof:true,prof_active:false', 'drop-in: MALLOC_CONF');

SKIP: {
    skip 'systemd-analyze is not installed', 1
        unless have('systemd-analyze')
               && -f '/lib/systemd/system/nginx.service';
    my $units = "$saved/units";
    mkdir $units;
    mkdir "$units/nginx.service.d";
    system('cp', '/lib/systemd/system/nginx.service', $units);
    system('cp', $example, "$units/nginx.service.d/");
    local $ENV{SYSTEMD_UNIT_PATH} = "$units:";
    my $verify = `systemd-analyze verify $units/nginx.service 2>&1`;
    is($verify, '', 'systemd-analyze verify: nginx.service with the drop-in');
}

# the system nginx, with only a loopback test site, started the way
# nginx.service starts it, in the drop-in's environment

my $port = free_port();

system('mv', $default_site, "$saved/default-site") if -e $default_site;
write_file($site, <<"EOF");
server {
    listen 127.0.0.1:$port;

    # the held connections below stay in their request headers while
    # jeprof and go tool pprof run: on a root where Go first builds its
    # pprof (Debian testing), that takes longer than the 60 s default,
    # and a worker whose connections timed out holds nothing sampled
    client_header_timeout 10m;

    location / {
        return 200 "hello\\n";
    }

    # a gzip'ed response allocates some 256 KiB of zlib state
    location /gzip {
        default_type text/html;
        gzip_min_length 1;
        return 200 "hello, gzip\\n";
    }

    location /malloc/ {
        malloc_admin write=on;
        allow 127.0.0.1;
        deny all;
    }
}
EOF

start_nginx(%env);

my $r = get('/');
is($r->{status}, 200, 'the site answers');
is($r->{content}, "hello\n", 'the site is unchanged');

$r = get('/malloc/');
is($r->{status}, 200, 'GET /malloc/');
my $state = json_decode($r->{content});
is($state->{jemalloc}{state}, 'ok', 'nginx runs on jemalloc');
is($state->{dump_dir}, $dump_dir, "dumps go to $dump_dir by default");
my $workers = @{$state->{workers}};
my $cpus = `nproc`;
chomp $cpus;
is($workers, $cpus, "worker_processes auto: $workers workers");

ok(-d $dump_dir && (stat $dump_dir)[4] == getpwnam('www-data'),
   'the dump directory is made, owned by www-data');

# sampling on in every worker, everything sampled, memory held by
# connections that are in the middle of their request headers.  A thread
# takes its next sample at the old rate, after 512 KiB on average: gzip'ed
# responses allocate that much first.

$r = post('/malloc/prof_active', 'true');
is($r->{status}, 200, 'POST prof_active true');
ok(poll_until(5, sub { all_active(1) }), 'sampling is on in every worker');

$r = post('/malloc/prof_reset', '{"lg_sample": 0, "force": true}');
is($r->{status}, 200, 'POST prof_reset: sample every allocation');

my $gzip = HTTP::Tiny->new(default_headers => { 'Accept-Encoding' => 'gzip' });
my $gzipped = grep {
    ($gzip->get("http://127.0.0.1:$port/gzip")->{headers}{'content-encoding'}
     // '') eq 'gzip'
} 1 .. 200;
is($gzipped, 200, '200 gzip\'ed responses');

my @held;
for (1 .. 40) {
    my $s = IO::Socket::INET->new("127.0.0.1:$port") or last;
    print $s "GET / HTTP/1.1\r\nHost: localhost\r\nX-Held: $_\r\n";
    push @held, $s;
}
is(scalar @held, 40, '40 connections hold a request each');

$r = post('/malloc/prof_dump', '"/var/lib/nginx/malloc/deb-test.heap"');
is($r->{status}, 200, 'POST prof_dump, Lighthouse\'s body');
my @dumps = map { $_->{path} } @{json_decode($r->{content})->{workers}};
is(scalar @dumps, $workers, 'a dump per worker');
for my $d (@dumps) {
    my @st = stat $d;
    ok(@st && $st[4] == getpwnam('www-data') && ($st[2] & 0777) == 0600,
       "$d: www-data's, 0600");
}

my $jeprof = `jeprof --text /usr/sbin/nginx @dumps 2>&1`;
like($jeprof, qr/\bngx_\w+/, 'jeprof on the dumps names nginx functions')
    or diag($jeprof);

$jeprof = `jeprof --text http://127.0.0.1:$port/malloc/pprof/heap 2>&1`;
like($jeprof, qr/\bngx_\w+/, 'jeprof on the URL names nginx functions')
    or diag($jeprof);

SKIP: {
    skip 'go is not installed (golang-go)', 1 unless have('go');
    my $url = "http://127.0.0.1:$port/malloc/pprof/heap.pb.gz";
    my $pprof = `go tool pprof -top -sample_index=inuse_space $url 2>&1`;
    like($pprof, qr/\bngx_\w+/, 'go tool pprof names nginx functions')
        or diag($pprof);
}

close $_ for @held;

$r = get('/malloc/metrics');
is($r->{status}, 200, 'GET metrics');
like($r->{content}, qr/^nginx_malloc_allocated_bytes\{worker="0"/m,
     'Prometheus metrics of the workers');

$r = post('/malloc/prof_active', 'false');
is($r->{status}, 200, 'POST prof_active false');
ok(poll_until(5, sub { all_active(0) }), 'sampling is off in every worker');

my $error_log = read_file('/var/log/nginx/error.log') // '';
my $new_lines = substr $error_log, $log_size{'/var/log/nginx/error.log'} // 0;
unlike($new_lines, qr/\[(alert|crit|emerg)\]/, 'no alert in error.log')
    or diag($new_lines);

stop_nginx();

# without systemd: Debian's init script sources /etc/default/nginx, where
# docs/operations.md puts the two variables

write_file($default_env, ($saved_default_env // '') . <<"EOF");
export LD_PRELOAD=$env{LD_PRELOAD}
export MALLOC_CONF=$env{MALLOC_CONF}
EOF

($rc, $out) = run_reaping('/etc/init.d/nginx', 'start');
is($rc, 0, 'init script: start') or diag($out);
ok(poll_until(5, sub { get('/malloc/')->{status} == 200 }),
   'init script: nginx answers');
$state = json_decode(get('/malloc/')->{content});
is($state->{jemalloc}{state}, 'ok', 'init script: nginx runs on jemalloc');
ok($state->{jemalloc}{opt_prof}, 'init script: prof:true');
ok(!$state->{prof_active}, 'init script: sampling inactive');

# upgrading Debian's nginx package runs the init script's upgrade: a
# binary upgrade, whose new master only has the variables of env lines

upgrade_to('jemalloc_not_found', 'upgrade without env lines: on glibc');

($rc, $out) = run_reaping('/etc/init.d/nginx', 'restart');
is($rc, 0, 'init script: restart') or diag($out);
is(jemalloc_state(), 'ok', 'restart: on jemalloc again');

# the lines count once the running configuration has them: a reload
my $nginx_conf = read_file('/etc/nginx/nginx.conf');
write_file('/etc/nginx/nginx.conf',
           $nginx_conf . "\nenv LD_PRELOAD;\nenv MALLOC_CONF;\n");
my %old = map { $_ => 1 } listed_workers();
($rc, $out) = run_reaping('/etc/init.d/nginx', 'reload');
is($rc, 0, 'init script: reload') or diag($out);
ok(poll_until(10, sub {
    my @new = listed_workers();
    return @new && !grep { $old{$_} } @new;
}), 'reload: new workers');

upgrade_to('ok', 'upgrade with env lines: on jemalloc');

($rc, $out) = run_reaping('/etc/init.d/nginx', 'stop');
is($rc, 0, 'init script: stop') or diag($out);
write_file('/etc/nginx/nginx.conf', $nginx_conf);
ok(!nginx_running(), 'init script: nginx stopped');

# remove: the module is no longer loaded, the dumps stay

write_file($site, <<"EOF");
server {
    listen 127.0.0.1:$port;
    location / {
        return 200 "hello\\n";
    }
}
EOF

$out = `apt-get remove -y $pkg 2>&1`;
is($? >> 8, 0, 'apt-get remove') or diag($out);
ok(!-e $link && -l "$link.removed", 'remove: the load file is disabled');
ok(-e $dumps[0], 'remove: the dumps stay');
is(system('/usr/sbin/nginx -t -q'), 0, 'remove: nginx -t passes');

$out = `apt-get install -y $deb 2>&1`;
is($? >> 8, 0, 'install again') or diag($out);
ok(-l $link && !-l "$link.removed", 'install again: enabled again');
$out = `apt-get remove -y $pkg 2>&1`;
is($? >> 8, 0, 'apt-get remove, again') or diag($out);

# purge: nothing left behind

$out = `apt-get purge -y $pkg 2>&1`;
is($? >> 8, 0, 'apt-get purge') or diag($out);
ok(!installed(), 'dpkg: not installed, no configuration left');
is_deeply([grep { -e $_ || -l $_ } @files], [],
          'purge: none of the package\'s files is left');
ok(!-e "/usr/share/doc/$pkg", 'purge: no doc directory');
ok(!-e $link && !-l $link && !-l "$link.removed",
   'purge: no link in modules-enabled');
ok(!-e $dump_dir, "purge: $dump_dir is gone");

start_nginx();
$r = get('/');
is($r->{status}, 200, 'after purge: the system nginx starts and serves');
stop_nginx();

unlink $site;
system('mv', "$saved/default-site", $default_site)
    if -e "$saved/default-site";
is(`diff -r --no-dereference /etc/nginx $saved/etc-nginx 2>&1`, '',
   '/etc/nginx is as before the test, but for the test site');

done_testing;

###############################################################################

sub installed {
    my $s = `dpkg-query -W -f '\${db:Status-Status}' $pkg 2>/dev/null`;
    return $? == 0 && $s ne 'not-installed';
}

sub nginx_running {
    my $pid = read_file($pidfile) // return 0;
    chomp $pid;
    return $pid =~ /^\d+$/ && alive($pid);
}

sub have {
    my ($cmd) = @_;
    return system("command -v $cmd >/dev/null 2>&1") == 0;
}

sub read_file {
    my ($path) = @_;
    open my $fh, '<', $path or return undef;
    local $/;
    return scalar <$fh>;
}

sub write_file {
    my ($path, $text) = @_;
    open my $fh, '>', $path or die "$path: $!";
    print $fh $text;
    close $fh or die "$path: $!";
}

# Environment= lines of a systemd unit file, KEY=VALUE without quotes
sub drop_in_env {
    my ($path) = @_;
    my %env;
    for my $line (split /\n/, read_file($path) // '') {
        $env{$1} = $2 if $line =~ /^Environment=(\w+)=(\S+)$/;
    }
    return %env;
}

# Runs a command that waits for nginx to exit (start-stop-daemon --stop
# --retry): nginx's master is our child, so it is reaped meanwhile.
# Returns (exit status, output).
sub run_reaping {
    my @cmd = @_;
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        open STDOUT, '>', "$saved/cmd.log" or die;
        open STDERR, '>&', \*STDOUT or die;
        exec @cmd or die "exec $cmd[0]: $!";
    }
    while ((my $k = waitpid(-1, 0)) > 0) {
        last if $k == $pid;
    }
    return ($? >> 8, read_file("$saved/cmd.log"));
}

# /etc/init.d/nginx upgrade, then the state of jemalloc under the new
# master
sub upgrade_to {
    my ($want, $name) = @_;
    my $old = read_file($pidfile);
    my ($rc, $out) = run_reaping('/etc/init.d/nginx', 'upgrade');
    is($rc, 0, "$name: init script upgrade") or diag($out);
    ok(poll_until(10, sub { !alive($old) }), "$name: old master gone");
    my $state;
    poll_until(10, sub {
        $state = jemalloc_state();
        return defined $state && $state eq $want;
    });
    is($state, $want, $name);
}

# the pids of the workers that /malloc/ lists
sub listed_workers {
    my $r = get('/malloc/');
    return eval { map { $_->{pid} // () }
                  @{json_decode($r->{content})->{workers}} };
}

sub jemalloc_state {
    my $r = get('/malloc/');
    return eval { json_decode($r->{content})->{jemalloc}{state} };
}

# ExecStartPre and ExecStart of Debian's nginx.service
sub start_nginx {
    my (%extra) = @_;
    local @ENV{keys %extra} = values %extra;
    my $g = 'daemon on; master_process on;';
    my $t = `/usr/sbin/nginx -t -q -g '$g' 2>&1`;
    is($? >> 8, 0, 'nginx -t') or diag($t);
    # a file, not a pipe: the daemon must not hold our end open
    system("/usr/sbin/nginx -g '$g' > $saved/start.log 2>&1");
    is($? >> 8, 0, 'nginx starts') or diag(read_file("$saved/start.log"));
    ok(poll_until(5, sub { IO::Socket::INET->new("127.0.0.1:$port") }),
       'nginx listens');
}

sub stop_nginx {
    my $pid = read_file($pidfile) // return;
    chomp $pid;
    kill 'QUIT', $pid;
    ok(poll_until(10, sub { !alive($pid) }), 'nginx stops');
    1 while waitpid(-1, WNOHANG) > 0;
}

sub http {
    my ($method, $path, $body) = @_;
    my %opt = defined $body ? (content => $body) : ();
    return HTTP::Tiny->new(timeout => 30)->request($method,
        "http://127.0.0.1:$port$path", \%opt);
}

sub get { http('GET', @_) }
sub post { http('POST', @_) }

sub all_active {
    my ($want) = @_;
    my $r = get('/malloc/');
    return 0 unless $r->{status} == 200;
    my @w = @{json_decode($r->{content})->{workers}};
    return @w && !grep { !defined $_->{prof_active}
                         || ($_->{prof_active} ? 1 : 0) != $want } @w;
}

sub restore {
    if (nginx_running()) {
        my $pid = read_file($pidfile);
        chomp $pid;
        kill 'QUIT', $pid;
        poll_until(10, sub { !alive($pid) }) or kill 'KILL', -$pid, $pid;
        1 while waitpid(-1, WNOHANG) > 0;
    }
    system("apt-get purge -y $pkg >/dev/null 2>&1") if installed();

    system('rm', '-rf', '/etc/nginx') == 0
        and system('cp', '-a', "$saved/etc-nginx", '/etc/nginx') == 0
        or warn "cannot restore /etc/nginx from $saved/etc-nginx\n";

    if (defined $saved_default_env) {
        write_file($default_env, $saved_default_env);
    } else {
        unlink $default_env;
    }

    for my $log (keys %log_size) {
        truncate $log, $log_size{$log};
    }
    for my $log (glob '/var/log/nginx/*.log') {
        unlink $log unless exists $log_size{$log};
    }

    system('rm', '-rf', $dump_dir);
    rename $moved_dump_dir, $dump_dir if defined $moved_dump_dir;
    for my $dir (keys %var_lib) {
        my ($mode, $uid, $gid) = @{$var_lib{$dir}};
        chown $uid, $gid, $dir;
        chmod $mode, $dir;
    }
}
