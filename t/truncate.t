#!/usr/bin/perl

# Copyright (C) 2026 ngx_http_malloc_module maintainers
# BSD 2-Clause licence: see LICENSE.

# A module rewritten in place under a running nginx, while its workers
# serve profiles.  The symbolizer reads files with pread() into memory of
# its own, so a file shorter than it was is only a file without symbols:
# no worker dies of SIGBUS, profiles still name nginx's code, and the
# module's names come back once its bytes are whole again.
#
# First the file loses what follows its loaded segments (the symbol table
# and the section headers) or gets junk there: the processes' own pages of
# the module are untouched, so nginx reloads and stops as usual.  Then it
# is cut to one page and to nothing, as a "cp" over a loaded library does.
# The kernel then drops every page of the module that nginx mapped, even
# the private copies that the dynamic linker relocated, and writing the
# bytes back does not relocate them again: any use of the module, down to
# its destructors at exit, crashes that process.  The profiles must not
# be that use; the test ends the processes with SIGKILL.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use File::Copy qw(copy);
use POSIX qw(_exit);
use Test::More;
use Time::HiRes qw(time);
use MallocTest qw(poll_until alive);

no warnings qw(portable);

my $go = `sh -c 'command -v go' 2>/dev/null`;
plan skip_all => 'go tool pprof is not installed (golang-go)' unless $go;

my $t = MallocTest->new(workers => 2);

# copies of both modules, readable by the workers' user, so that a worker
# reads the file again once it has changed

my $dir = $t->prefix . '/modules';
mkdir $dir, 0755 or die "$dir: $!";
chmod 0755, $dir;

for my $so (qw(ngx_http_malloc_module.so ngx_http_malloc_test_module.so)) {
    copy("$MallocTest::MODULE_DIR/$so", "$dir/$so") or die "$so: $!";
    chmod 0644, "$dir/$so";
}

my $so = "$dir/ngx_http_malloc_test_module.so";
my $ino = (stat $so)[1];

my $orig = do {
    open my $fh, '<:raw', $so or die "$so: $!";
    local $/;
    <$fh>;
};

# where the loaded segments end in the file: what follows is read by the
# symbolizer only

my $loaded = 0;
my ($phoff, $phentsize, $phnum) = unpack('@32 Q< @54 S< S<', $orig);
for my $i (0 .. $phnum - 1) {
    my ($type, $off, $filesz) =
        unpack('L< @8 Q< @32 Q<', substr($orig, $phoff + $i * $phentsize));
    $loaded = $off + $filesz if $type == 1 && $off + $filesz > $loaded;
}
my $tail = substr($orig, $loaded);
ok($loaded > 4096 && length($tail) > 4096,
   "loaded segments end at $loaded of " . length($orig) . ' bytes');

my ($hold) = `nm --defined-only $so`
    =~ /^([0-9a-f]+) T ngx_http_malloc_test_hold$/m;
my ($phase) = `nm -D --defined-only $MallocTest::NGINX`
    =~ /^([0-9a-f]+) T ngx_http_core_content_phase$/m;
ok(defined $hold && defined $phase, 'symbols of the test module and nginx');

$t->{module_dir} = $dir;
$t->start;

# clients keep their caches under $HOME
$ENV{HOME} = $t->prefix;
$ENV{PPROF_TMPDIR} = $t->prefix . '/pprof';

my $url = 'http://127.0.0.1:' . $t->port . '/malloc';

# the first mapping of a file (file offset 0) is its load bias

sub bias {
    my ($pid, $path) = @_;
    open my $fh, '<', "/proc/$pid/maps" or return undef;
    while (my $line = <$fh>) {
        return hex($1)
            if $line =~ /^([0-9a-f]+)-\S+ \S+ 0+ \S+ \d+ +\Q$path\E$/;
    }
    return undef;
}

# how a process maps the file: "inode" when every line of it names the
# very inode of the copy, without " (deleted)"

sub mapped {
    my ($pid, $path) = @_;
    open my $fh, '<', "/proc/$pid/maps" or return '';
    my @lines = grep { /\Q$path\E/ } <$fh>;
    return '' unless @lines;
    return (grep { !/ $ino +\Q$path\E$/ } @lines) ? 'other' : 'inode';
}

# 16 bytes of a process's memory, or undef where the page is gone

sub peek {
    my ($pid, $addr) = @_;
    open my $fh, '<:raw', "/proc/$pid/mem" or return undef;
    sysseek($fh, $addr, 0) or return undef;
    my $n = sysread($fh, my $buf, 16);
    return $n && $n == 16 ? $buf : undef;
}

my ($master, @pids, %to, $addrs, $addr_hold);

# a generation of workers: each maps the copy; ports that reach each
# (asked through /t/state, the test module's code, while it may run); 16
# MiB held by the test module in each

sub workers {
    my ($gen) = @_;
    $master = $t->master_pid;
    @pids = $t->worker_pids;
    is(scalar @pids, 2, "$gen: two workers");
    for my $pid (@pids) {
        is(mapped($pid, $so), 'inode', "$gen: worker $pid maps the copy");
    }

    $addr_hold = bias($pids[0], $so) + hex($hold) + 4;
    $addrs = sprintf('0x%x+0x%x', $addr_hold,
                     bias($pids[0], $MallocTest::NGINX) + hex($phase) + 4);

    %to = map { $_ => [$t->ports_to($_, 2)] } @pids;
    is(scalar(map { @$_ } values %to), 4, "$gen: ports to both workers");

    for my $pid (@pids) {
        is($t->http_from($to{$pid}[0], 'GET', '/t/alloc?mb=16&block=8')
               ->{json}{pid}, $pid, "$gen: 16 MiB held in worker $pid");
    }
}

# one request of each kind to each worker: those answered with neither
# 200 nor a JSON error, and the profiles and names served, by worker

my @kinds = (
    [GET => '/malloc/pprof/heap.pb.gz'],
    [GET => '/malloc/pprof/heap'],
    [GET => '/malloc/heap'],
    [POST => '/malloc/pprof/symbol'],
);

sub round {
    my ($name) = @_;
    my (@bad, %pb, %sym);
    for my $pid (@pids) {
        for my $k (@kinds) {
            my ($method, $path) = @$k;
            my $r = $t->http_from($to{$pid}[1], $method, $path,
                                  $method eq 'POST' ? $addrs : undef);
            push @bad, "$name: $method $path to $pid: $r->{status}"
                if $r->{status} != 200
                   && !($r->{json} && $r->{json}{error}{code});
            $pb{$pid} = $r->{content} if $path =~ /pb\.gz$/;
            $sym{$pid} = $r->{content} if $method eq 'POST';
        }
    }
    return (\@bad, \%pb, \%sym);
}

sub pprof_top {
    my ($content) = @_;
    my $pb = $t->prefix . '/heap.pb.gz';
    open my $fh, '>:raw', $pb or die "$pb: $!";
    print $fh $content // '';
    close $fh;
    my $top = `cd / && go tool pprof -top -sample_index=inuse_space $pb 2>&1`;
    return $top;
}

my $named = qr/\bngx_http_malloc_test_hold\b/;
my $sym_named = qr/\tngx_http_malloc_test_hold$/m;
my $unnamed = qr/\bngx_http_malloc_test_module\.so\+0x[0-9a-f]+/;
my $sym_unnamed = qr/\tngx_http_malloc_test_module\.so\+0x[0-9a-f]+$/m;

# every request answered; go tool pprof and pprof/symbol name nginx's code
# in each worker, and the test module's as asked

sub check {
    my ($name, $pb_re, $sym_re) = @_;
    my ($bad, $pb, $sym) = round($name);
    is("@$bad", '', "$name: every request answered");
    for my $pid (@pids) {
        my $top = pprof_top($pb->{$pid});
        like($top, qr/ngx_http_core_content_phase/,
             "$name: pprof names nginx in worker $pid") or diag $top;
        like($top, $pb_re, "$name: pprof on the test module in worker $pid")
            or diag $top;
        like($sym->{$pid}, qr/\tngx_http_core_content_phase$/m,
             "$name: pprof/symbol names nginx in worker $pid");
        like($sym->{$pid}, $sym_re,
             "$name: pprof/symbol on the test module in worker $pid");
    }
}

# requests while a child changes the file as fast as it can: a file may
# shrink between stat() and pread(), or between two reads of one image.
# Each version that a worker sees takes an entry of its symbol cache for
# the life of the worker: a full round, 24 name lookups to each worker, a
# full round.

sub changing {
    my ($name, @states) = @_;
    my $child = fork // die "fork: $!";
    if ($child == 0) {
        my $parent = getppid();
        my $end = time() + 10;
        eval {
            while (time() < $end && getppid() == $parent) {
                $_->() for @states;
            }
        };
        _exit(0);
    }

    my ($bad, $pb) = round("$name, first");
    my @bad = @$bad;
    my @top = map { scalar pprof_top($_) } values %$pb;

    for my $i (1 .. 24) {
        for my $pid (@pids) {
            my $r = $t->http_from($to{$pid}[1], 'POST',
                                  '/malloc/pprof/symbol', $addrs);
            push @bad, "$name: POST to $pid: $r->{status}"
                if $r->{status} != 200;
        }
    }

    ($bad, $pb) = round("$name, last");
    push @bad, @$bad;
    push @top, map { scalar pprof_top($_) } values %$pb;

    kill 'TERM', $child;
    waitpid $child, 0;

    is("@bad", '', "$name: every request answered");
    is(scalar(grep { /ngx_http_core_content_phase/ } @top), scalar @top,
       "$name: every profile names nginx");
    is_deeply([$t->worker_pids], \@pids, "$name: no worker replaced");
}

# once the module's pages are gone from the processes, nginx would crash
# in the module's destructors on its way out: it is killed instead, also
# when the test dies

my $hollow;

sub kill_nginx {
    my @all = grep { defined } ($t->master_pid, $t->worker_pids(1));
    kill 'KILL', @all;
    $t->{started} = 0;
    return poll_until(10, sub { !grep { alive($_) } @all });
}

END { kill_nginx() if $hollow && $t && $t->{started}; }

is($t->post('/malloc/prof_active', 'true')->{status}, 200, 'profiling on');
workers('start');
check('whole', $named, $sym_named);

# the file changes in place: same inode, still mapped

open my $fh, '+<:raw', $so or die "$so: $!";

sub tail_is {
    my ($bytes) = @_;
    truncate $fh, $loaded or die "truncate: $!";
    sysseek $fh, $loaded, 0;
    syswrite($fh, $bytes) == length $bytes or die "write: $!";
}

sub first {
    my ($len) = @_;
    truncate $fh, 0 or die "truncate: $!";
    sysseek $fh, 0, 0;
    syswrite($fh, $orig, $len) == $len or die "write: $!";
}

my $junk = 'x' x (length($tail) + 2048);

truncate $fh, $loaded or die "truncate: $!";
is(-s $so, $loaded, 'cut where the loaded segments end');
is((stat $so)[1], $ino, 'same inode');
is(mapped($pids[0], $so), 'inode', 'still mapped');
check('no symbol table', $unnamed, $sym_unnamed);

tail_is($junk);
is(-s $so, $loaded + length $junk, 'junk after the loaded segments');
check('junk', $unnamed, $sym_unnamed);

changing('changing tail', sub { truncate $fh, $loaded },
         sub { tail_is($junk) }, sub { tail_is($tail) });

tail_is($tail);
is(-s $so, length $orig, 'whole again');
check('whole again', $named, $sym_named);

my $jeprof = `jeprof --text $url/pprof/heap 2>&1`;
like($jeprof, $named, 'whole again: jeprof names the test module')
    or diag $jeprof;

# a reload: the old workers exit as usual, running the module's
# destructors: cut after its loaded segments, the file took none of the
# pages that the processes mapped

my @old = @pids;
$t->reload;
ok(poll_until(10, sub {
    my $log = $t->log_text;
    !grep { $log !~ /worker process $_ exited/ } @old;
}), 'old workers gone');
for my $pid (@old) {
    like($t->log_text, qr/worker process $pid exited with code 0/,
         "old worker $pid exited as usual");
}
unlike($t->log_text, qr/exited on signal/, 'no process died so far');

workers('reloaded');
check('reloaded', $named, $sym_named);

# cut below the loaded segments: the processes' pages of the module are
# gone (read through /proc/PID/mem, they fail), and profiles are served

ok(defined peek($pids[0], $addr_hold), 'the module code is readable');

$hollow = 1;
truncate $fh, 4096 or die "truncate: $!";
is(-s $so, 4096, 'cut to its first page');
is(mapped($pids[0], $so), 'inode', 'still mapped');
ok(!defined peek($pids[0], $addr_hold), 'the module code is gone');
check('one page', $unnamed, $sym_unnamed);

truncate $fh, 0 or die "truncate: $!";
is(-s $so, 0, 'cut to nothing');
check('empty', $unnamed, $sym_unnamed);

$jeprof = `jeprof --text $url/pprof/heap 2>&1`;
like($jeprof, qr/ngx_http_core_content_phase/, 'empty: jeprof names nginx')
    or diag $jeprof;

my $half = int(length($orig) / 2);
first($half);
is(-s $so, $half, 'rewritten to half its length');
check('half', $unnamed, $sym_unnamed);

changing('changing all', sub { truncate $fh, 4096 },
         sub { truncate $fh, 0 }, sub { first($half) },
         sub { first(length $orig) });

first(length $orig);
close $fh;
is(-s $so, length $orig, 'rewritten whole');
check('rewritten whole', $named, $sym_named);

is_deeply([$t->worker_pids], \@pids, 'no worker replaced');
is($t->master_pid, $master, 'same master');
unlike($t->log_text, qr/exited on signal/, 'no process died');
$t->no_alerts;

ok(kill_nginx(), 'nginx killed rather than stopped');

done_testing;
